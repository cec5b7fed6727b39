// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the formats tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hprof_format.h"

namespace formats_test {

// Big-endian byte builder for hand-made (often malformed) inputs.
struct Bytes {
  std::vector<uint8_t> b;
  Bytes& u1(uint32_t v) {
    b.push_back(static_cast<uint8_t>(v));
    return *this;
  }
  Bytes& u2(uint32_t v) { return u1(v >> 8).u1(v); }
  Bytes& u4(uint32_t v) { return u2(v >> 16).u2(v); }
  Bytes& u8(uint64_t v) { return u4(static_cast<uint32_t>(v >> 32)).u4(static_cast<uint32_t>(v)); }
  Bytes& id(uint64_t v, uint32_t id_size) {
    return id_size == 4 ? u4(static_cast<uint32_t>(v)) : u8(v);
  }
  Bytes& str(const std::string& s, bool nul = false) {
    b.insert(b.end(), s.begin(), s.end());
    if (nul) b.push_back(0);
    return *this;
  }
  Bytes& header(uint32_t id_size = 8, const std::string& version = "JAVA PROFILE 1.0.2") {
    return str(version, true).u4(id_size).u8(1700000000000ull);
  }
  Bytes& record(uint8_t tag, const std::vector<uint8_t>& body) {
    u1(tag).u4(0).u4(static_cast<uint32_t>(body.size()));
    b.insert(b.end(), body.begin(), body.end());
    return *this;
  }
  size_t size() const { return b.size(); }
};

inline hprof::WriterOptions options(uint32_t id_size, hprof::Version v = hprof::Version::k1_0_2) {
  hprof::WriterOptions o;
  o.id_size = id_size;
  o.version = v;
  o.timestamp_ms = 1700000000123ull;
  o.clock = [] { return 777u; };
  return o;
}

}  // namespace formats_test
