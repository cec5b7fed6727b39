// SPDX-License-Identifier: Apache-2.0
// StreamParser: the same callbacks as parse() whatever the chunking; errors at the same offsets.
#include <gtest/gtest.h>

#include "hprof_format.h"
#include "test_util.h"

using namespace hprof;
using formats_test::Bytes;
using formats_test::options;

namespace {

// Logs every callback as text.
struct Log : Visitor {
  std::vector<std::string> lines;
  void add(std::string s) { lines.push_back(std::move(s)); }
  void on_header(const Header& h) override { add("header " + std::to_string(h.id_size)); }
  void on_record(const RecordInfo& i) override {
    add("record " + std::to_string(static_cast<int>(i.tag)) + " @" + std::to_string(i.offset) +
        " len " + std::to_string(i.length));
  }
  void on_utf8(const Utf8& r) override { add("utf8 " + std::string(r.text)); }
  void on_load_class(const LoadClass& r) override { add("class " + std::to_string(r.class_id)); }
  void on_end_thread(const EndThread& r) override { add("end " + std::to_string(r.thread_serial)); }
  void on_root(const Root& r) override { add("root " + std::to_string(r.object_id)); }
  void on_instance_dump(const InstanceDump& r) override {
    add("instance " + std::to_string(r.object_id) + " " + std::to_string(r.fields.size()));
  }
  void on_prim_array_dump(const PrimArrayDump& r) override {
    add("prim " + std::to_string(r.array_id) + " " + std::to_string(r.element_bits(r.length - 1)));
  }
  void on_heap_dump_end(const RecordInfo&) override { add("dump end"); }
};

std::vector<uint8_t> sample() {
  MemorySink sink;
  WriterOptions o = options(8);
  o.segment_limit = 64;
  BinaryWriter w(sink, o);
  w.utf8(1, "one");
  w.load_class({1, 0x10, 0, 1, 0});
  HeapDumpWriter d = w.begin_heap_dump();
  for (int i = 0; i < 20; ++i) d.root_unknown(100 + i);
  std::vector<uint8_t> f(12, 7);
  d.instance_dump(0x40, 0, 0x10, f);
  int32_t a[300];
  for (int i = 0; i < 300; ++i) a[i] = i;
  d.prim_array_dump(0x41, 0, BasicType::kInt, a, 300);
  d.finish();
  w.end_thread(4);
  return sink.data();
}

}  // namespace

TEST(Stream, SameCallbacksForAnyChunking) {
  std::vector<uint8_t> data = sample();
  Log whole;
  parse(data, whole);
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{1000}, data.size()}) {
    Log streamed;
    StreamParser sp(streamed);
    for (size_t i = 0; i < data.size(); i += chunk) {
      sp.feed(data.data() + i, std::min(chunk, data.size() - i));
    }
    sp.finish();
    EXPECT_EQ(streamed.lines, whole.lines) << "chunk " << chunk;
    EXPECT_EQ(sp.offset(), data.size());
    EXPECT_EQ(sp.buffered(), 0u);
  }
}

TEST(Stream, TruncatedStreamFailsAtFinish) {
  std::vector<uint8_t> data = sample();
  for (size_t n : {size_t{0}, size_t{10}, size_t{31}, size_t{35}, data.size() - 1}) {
    Log log;
    StreamParser sp(log, "sock");
    sp.feed(data.data(), n);
    if (n == 31) {  // exactly the header: a valid (empty) profile
      EXPECT_NO_THROW(sp.finish());
      continue;
    }
    EXPECT_THROW(sp.finish(), FormatError) << n;
  }
}

TEST(Stream, ErrorsAsSoonAsTheBytesShowThem) {
  Log log;
  StreamParser sp(log, "sock");
  Bytes b;
  b.header().record(0x0B, {0, 0, 0, 1});
  sp.feed(b.b.data(), b.size());
  uint8_t bad[9] = {0x42, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff};
  try {
    sp.feed(bad, sizeof bad);
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.offset(), 44u);
    EXPECT_NE(std::string(e.what()).find("sock: offset 44: unknown record tag 0x42"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(sp.feed(bad, 1), std::logic_error);
  // A wrong version fails before the rest of the header arrives.
  StreamParser sp2(log);
  EXPECT_THROW(sp2.feed("JAVA PROFILE 0.1", 17), FormatError);
}
