// SPDX-License-Identifier: Apache-2.0
// HotSpot's performance-data file (/tmp/hsperfdata_<user>/<pid>, what jps and jstat read): a
// 32-byte prologue, then entries each naming one counter or string. The layout is HotSpot's
// PerfDataPrologue and PerfDataEntry (perfMemory.hpp), major version 2.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "attach.h"

namespace attach {
namespace {

constexpr uint32_t kMagic = 0xcafec0c0;  // always stored big-endian
constexpr size_t kPrologueSize = 32;
constexpr size_t kEntryHeaderSize = 20;
constexpr size_t kMaxFile = size_t{64} << 20;

class Bytes {
 public:
  Bytes(const std::string& data, bool little_endian) : data_(data), little_(little_endian) {}
  bool has(size_t at, size_t n) const { return at <= data_.size() && n <= data_.size() - at; }
  uint32_t u32(size_t at) const {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const uint32_t b = static_cast<unsigned char>(data_[at + i]);
      v |= little_ ? b << (8 * i) : b << (8 * (3 - i));
    }
    return v;
  }
  uint64_t u64(size_t at) const {
    const uint64_t a = u32(at), b = u32(at + 4);
    return little_ ? (b << 32) | a : (a << 32) | b;
  }

 private:
  const std::string& data_;
  bool little_;
};

}  // namespace

PerfData read_perf_data(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw AttachError("cannot read " + path + ": " + std::strerror(errno));
  std::string data;
  data.resize(kMaxFile);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (data.size() < kPrologueSize || Bytes(data, false).u32(0) != kMagic)
    throw AttachError(path + " is not a HotSpot performance-data file");
  const bool little = data[4] == 1;
  if (data[5] != 2)
    throw AttachError(path + ": performance-data version " + std::to_string(data[5]) +
                      " (this reader knows version 2)");
  const Bytes b(data, little);
  size_t at = b.u32(24);
  const uint32_t entries = b.u32(28);
  PerfData out;
  for (uint32_t i = 0; i < entries; ++i) {
    if (!b.has(at, kEntryHeaderSize)) break;  // a JVM still adding entries: keep what is complete
    const uint32_t length = b.u32(at), name_offset = b.u32(at + 4), vector_length = b.u32(at + 8);
    const char type = data[at + 12];
    const uint32_t data_offset = b.u32(at + 16);
    if (length < kEntryHeaderSize || !b.has(at, length) || name_offset >= length ||
        data_offset > length)
      break;
    const char* name_start = data.data() + at + name_offset;
    const size_t name_len = strnlen(name_start, length - name_offset);
    std::string name(name_start, name_len);
    if (vector_length == 0 && type == 'J' && b.has(at + data_offset, 8)) {
      out.longs[name] = static_cast<long long>(b.u64(at + data_offset));
    } else if (vector_length > 0 && type == 'B' && data_offset + vector_length <= length) {
      const char* s = data.data() + at + data_offset;
      out.strings[name] = std::string(s, strnlen(s, vector_length));
    }
    at += length;
  }
  return out;
}

}  // namespace attach
