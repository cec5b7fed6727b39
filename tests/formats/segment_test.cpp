// SPDX-License-Identifier: Apache-2.0
// Heap dumps split into HEAP DUMP SEGMENTs: by length patching on seekable sinks, by bounded
// buffering on streams; 1.0.1 single records; top-level records during an open dump.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "hprof_format.h"
#include "test_util.h"

using namespace hprof;
using formats_test::options;

namespace {

// Records the segments of a file.
struct SegmentRecorder : Visitor {
  std::vector<RecordInfo> segments;
  int ends = 0;
  int roots = 0;
  void on_heap_dump_segment(const RecordInfo& i) override { segments.push_back(i); }
  void on_heap_dump_end(const RecordInfo&) override { ++ends; }
  void on_root(const Root&) override { ++roots; }
};

// A stream that remembers the largest single write (the writer's buffering shows up there).
class CountingStream : public Sink {
 public:
  void write(const void* data, size_t size) override {
    largest = std::max(largest, size);
    auto p = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + size);
  }
  size_t largest = 0;
  std::vector<uint8_t> bytes;
};

void write_roots(HeapDumpWriter& d, int n) {
  for (int i = 0; i < n; ++i) d.root_sticky_class(0x1000 + i);  // 9 bytes each with id size 8
}

}  // namespace

TEST(Segments, SeekableSinkSplitsAtTheLimit) {
  MemorySink sink(true);
  WriterOptions o = options(8);
  o.segment_limit = 100;  // 11 roots of 9 bytes per segment
  {
    BinaryWriter w(sink, o);
    HeapDumpWriter d = w.begin_heap_dump();
    write_roots(d, 50);
    d.finish();
  }
  SegmentRecorder rec;
  parse(sink.data(), rec);
  ASSERT_EQ(rec.segments.size(), 5u);  // 11+11+11+11+6
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(rec.segments[i].length, 99u);
  EXPECT_EQ(rec.segments[4].length, 54u);
  EXPECT_EQ(rec.ends, 1);
  EXPECT_EQ(rec.roots, 50);
  Profile p = read_memory(sink.data());
  ASSERT_EQ(p.heap_dumps.size(), 1u);
  EXPECT_EQ(p.heap_dumps[0].segments, 5u);
  EXPECT_TRUE(p.heap_dumps[0].complete);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(p.heap_dumps[0].roots[i].object_id, 0x1000u + i);
}

TEST(Segments, StreamedSinkBuffersBoundedSegments) {
  CountingStream sink;
  WriterOptions o = options(8);
  o.buffer_limit = 4096;
  std::vector<int32_t> big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int32_t>(i * 3);
  std::vector<Id> refs(3000);
  for (size_t i = 0; i < refs.size(); ++i) refs[i] = 0x7f0000000000ull + i;
  {
    BinaryWriter w(sink, o);
    HeapDumpWriter d = w.begin_heap_dump();
    write_roots(d, 2000);
    d.prim_array_dump(0x50, 0, BasicType::kInt, big.data(), static_cast<uint32_t>(big.size()));
    d.obj_array_dump(0x51, 0, 0x52, refs);  // 24 KB: a segment of its own too
    write_roots(d, 10);
    d.finish();
  }
  // Buffered segments never exceed the buffer limit; bigger sub-records stream in chunks.
  EXPECT_LE(sink.largest, 64u * 1024);
  SegmentRecorder rec;
  parse(sink.bytes, rec);
  size_t over = 0;
  for (const RecordInfo& s : rec.segments) {
    if (s.length > 4096) ++over;
  }
  EXPECT_EQ(over, 2u);  // the int[] and the Object[]
  EXPECT_GE(rec.segments.size(), 2000u * 9 / 4096 + 2);
  Profile p = read_memory(sink.bytes);
  ASSERT_EQ(p.heap_dumps.size(), 1u);
  const HeapDump& d = p.heap_dumps[0];
  EXPECT_EQ(d.roots.size(), 2010u);
  const PrimArrayDump* a = d.find_primitive_array(0x50);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->length, big.size());
  for (size_t i = 0; i < big.size(); i += 997) EXPECT_EQ(a->element(i).as_int(), big[i]);
  EXPECT_EQ(a->element(big.size() - 1).as_int(), big.back());
  ASSERT_NE(d.find_object_array(0x51), nullptr);
  EXPECT_EQ(d.find_object_array(0x51)->elements, refs);
}

// Readers (VisualVM's, the JVM's own dumps set the pattern) need one dump's segments back to back,
// so a top-level record while a dump is open is a programming error, in both versions.
TEST(Segments, TopLevelRecordsDuringADumpAreRefused) {
  for (bool seekable : {true, false}) {
    MemorySink sink(seekable);
    {
      BinaryWriter w(sink, options(8));
      w.utf8(5, "early name");
      HeapDumpWriter d = w.begin_heap_dump();
      d.root_unknown(1);
      EXPECT_THROW(w.utf8(6, "late name"), std::logic_error);
      EXPECT_THROW(w.end_thread(3), std::logic_error);
      d.root_unknown(2);
      d.finish();
      w.end_thread(3);
    }
    Profile p = read_memory(sink.data());
    ASSERT_EQ(p.heap_dumps.size(), 1u);
    EXPECT_EQ(p.heap_dumps[0].segments, 1u);
    EXPECT_EQ(p.heap_dumps[0].roots.size(), 2u);
    EXPECT_EQ(p.string(5), "early name");
    EXPECT_EQ(p.ended_threads.size(), 1u);
  }
}

TEST(Segments, Version101WritesOneHeapDumpRecord) {
  for (bool seekable : {true, false}) {
    MemorySink sink(seekable);
    WriterOptions o = options(4, Version::k1_0_1);
    o.segment_limit = 50;  // ignored: 1.0.1 has no segments
    {
      BinaryWriter w(sink, o);
      HeapDumpWriter d = w.begin_heap_dump();
      write_roots(d, 100);
      EXPECT_THROW(w.utf8(1, "x"), std::logic_error);
      d.finish();
      HeapDumpWriter d2 = w.begin_heap_dump();  // a second, empty dump
      d2.finish();
    }
    SegmentRecorder rec;
    parse(sink.data(), rec);
    ASSERT_EQ(rec.segments.size(), 2u);
    EXPECT_EQ(rec.segments[0].tag, Tag::kHeapDump);
    EXPECT_EQ(rec.segments[0].length, 500u);  // 100 x (1 + 4)
    EXPECT_EQ(rec.segments[1].length, 0u);
    EXPECT_EQ(rec.ends, 0);
    Profile p = read_memory(sink.data());
    ASSERT_EQ(p.heap_dumps.size(), 2u);
    EXPECT_TRUE(p.heap_dumps[0].complete);
    EXPECT_EQ(p.heap_dumps[0].roots.size(), 100u);
  }
}

TEST(Segments, EmptyDumpAndDestructorFinishes) {
  MemorySink sink;
  {
    BinaryWriter w(sink, options(8));
    { HeapDumpWriter d = w.begin_heap_dump(); }  // finished by the destructor
    HeapDumpWriter d = w.begin_heap_dump();
    d.root_unknown(9);
    HeapDumpWriter moved = std::move(d);
    moved.finish();
  }
  Profile p = read_memory(sink.data());
  ASSERT_EQ(p.heap_dumps.size(), 2u);
  EXPECT_TRUE(p.heap_dumps[0].complete);
  EXPECT_EQ(p.heap_dumps[0].segments, 0u);
  EXPECT_EQ(p.heap_dumps[1].roots.size(), 1u);
}

TEST(Segments, FileSinkPatchesLengths) {
  std::string path =
      std::string(FORMATS_WORK_DIR) + "/segments_" + std::to_string(getpid()) + ".hprof";
  WriterOptions o = options(8);
  o.segment_limit = 1000;
  std::vector<int64_t> longs(1000, 0x0102030405060708);
  {
    FileSink sink(path);
    BinaryWriter w(sink, o);
    HeapDumpWriter d = w.begin_heap_dump();
    write_roots(d, 300);
    d.prim_array_dump(0x60, 0, BasicType::kLong, longs.data(), 1000);  // 8 KB > limit
    write_roots(d, 300);
    d.finish();
    sink.close();
  }
  SegmentRecorder rec;
  parse_file(path, rec);
  EXPECT_EQ(rec.roots, 600);
  EXPECT_EQ(rec.ends, 1);
  for (const RecordInfo& s : rec.segments) {
    if (s.length > 1000) {
      EXPECT_EQ(s.length, 1 + 8 + 4 + 4 + 1 + 8000u);
    }
  }
  Profile p = read_file(path);
  EXPECT_EQ(p.heap_dumps.at(0).find_primitive_array(0x60)->element(999).as_long(),
            0x0102030405060708);
  std::filesystem::remove(path);
}

TEST(Segments, FileSinkOnAPipeStreams) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<uint8_t> received;
  std::thread reader([&] {
    uint8_t buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) received.insert(received.end(), buf, buf + n);
  });
  {
    FileSink sink(fds[1]);
    EXPECT_FALSE(sink.seekable());
    WriterOptions o = options(8);
    o.buffer_limit = 200;
    BinaryWriter w(sink, o);
    w.control_settings(0, 4);
    HeapDumpWriter d = w.begin_heap_dump();
    write_roots(d, 100);
    d.finish();
    sink.flush();
  }
  close(fds[1]);
  reader.join();
  close(fds[0]);
  SegmentRecorder rec;
  parse(received, rec);
  EXPECT_EQ(rec.roots, 100);
  EXPECT_EQ(rec.segments.size(), 5u);  // 22 roots (198 bytes) per segment
}
