// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the reader must reject any input with FormatError, never crash or read out of
// bounds; the stream parser must agree with the whole-file parser; the model helpers must cope
// with whatever parses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "hprof_format.h"

namespace {

// Counts callbacks, to compare the two parsers.
struct Counter : hprof::Visitor {
  uint64_t n = 0;
  void on_record(const hprof::RecordInfo& i) override { n += 1 + i.offset; }
  void on_root(const hprof::Root&) override { ++n; }
  void on_class_dump(const hprof::ClassDump&) override { ++n; }
  void on_instance_dump(const hprof::InstanceDump&) override { ++n; }
  void on_obj_array_dump(const hprof::ObjArrayDump&) override { ++n; }
  void on_prim_array_dump(const hprof::PrimArrayDump&) override { ++n; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool whole_ok = true;
  try {
    hprof::Profile p = hprof::read_memory({data, size}, "fuzz");
    for (const hprof::HeapDump& d : p.heap_dumps) {
      (void)hprof::instance_counts(p, d);
      for (const hprof::InstanceDump& i : d.instances) {
        try {
          (void)hprof::decode_fields(p, d, i);
          (void)hprof::decode_string(p, d, i.object_id);
        } catch (const hprof::FormatError&) {
        }
      }
      for (const hprof::PrimArrayDump& a : d.primitive_arrays) {
        if (a.length > 0) (void)a.element_bits(a.length - 1);
      }
    }
  } catch (const hprof::FormatError&) {
    whole_ok = false;
  }

  Counter whole;
  uint64_t whole_error = ~uint64_t{0};
  try {
    hprof::parse({data, size}, whole, "fuzz");
  } catch (const hprof::FormatError& e) {
    whole_error = e.offset();
  }
  if ((whole_error == ~uint64_t{0}) != whole_ok) std::abort();

  Counter streamed;
  uint64_t stream_error = ~uint64_t{0};
  size_t chunk = size == 0 ? 1 : 1 + data[0] % 97;
  try {
    hprof::StreamParser sp(streamed, "fuzz");
    for (size_t i = 0; i < size; i += chunk) sp.feed(data + i, std::min(chunk, size - i));
    sp.finish();
  } catch (const hprof::FormatError& e) {
    stream_error = e.offset();
  }
  // Same verdict; on success the same callbacks.
  if ((whole_error == ~uint64_t{0}) != (stream_error == ~uint64_t{0})) std::abort();
  if (whole_error == ~uint64_t{0} && whole.n != streamed.n) std::abort();
  return 0;
}
