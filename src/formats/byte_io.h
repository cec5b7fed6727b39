// SPDX-License-Identifier: Apache-2.0
// Internal: big-endian encoding into byte vectors, and a bounds-checked cursor for reading.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hprof_format.h"

namespace hprof::detail {

inline void put_u1(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
}
inline void put_u2(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[2] = {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  out.insert(out.end(), b, b + 2);
}
inline void put_u4(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                  static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  out.insert(out.end(), b, b + 4);
}
inline void put_u8(std::vector<uint8_t>& out, uint64_t v) {
  put_u4(out, static_cast<uint32_t>(v >> 32));
  put_u4(out, static_cast<uint32_t>(v));
}
inline void store_u4(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
// Reads an n-byte big-endian unsigned number (n <= 8).
inline uint64_t load_be(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// Reads from `data`, which starts at file offset `base`. Every read is checked against the end;
// a short read throws FormatError naming `context` (the record being read) and the offset.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> data, uint64_t base, std::string_view source)
      : data_(data), base_(base), source_(source) {}

  void set_context(const char* context) { context_ = context; }
  uint64_t offset() const { return base_ + pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  uint8_t u1(const char* what) {
    need(1, what);
    return data_[pos_++];
  }
  uint16_t u2(const char* what) { return static_cast<uint16_t>(be(2, what)); }
  uint32_t u4(const char* what) { return static_cast<uint32_t>(be(4, what)); }
  uint64_t u8(const char* what) { return be(8, what); }
  uint64_t be(size_t n, const char* what) {
    need(n, what);
    uint64_t v = load_be(data_.data() + pos_, n);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> bytes(uint64_t n, const char* what) {
    need(n, what);
    auto s = data_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  // Checks that `count` items of `size` bytes fit before the end (no overflow, no allocation).
  void need_items(uint64_t count, uint64_t size, const char* what) {
    if (size != 0 && count > remaining() / size) {
      fail(std::string(what) + ": " + std::to_string(count) + " elements of " +
           std::to_string(size) + " bytes overrun the end of the " + context_ + " (" +
           std::to_string(remaining()) + " bytes left)");
    }
  }

  [[noreturn]] void fail(const std::string& problem) const { fail_at(problem, offset()); }
  [[noreturn]] void fail_at(const std::string& problem, uint64_t offset) const {
    throw FormatError(std::string(source_) + ": offset " + std::to_string(offset) + ": " + problem,
                      offset);
  }

 private:
  void need(uint64_t n, const char* what) const {
    if (n > remaining()) {
      fail("truncated " + std::string(context_) + ": " + what + " needs " + std::to_string(n) +
           " bytes, " + std::to_string(remaining()) + " left");
    }
  }

  std::span<const uint8_t> data_;
  uint64_t base_;
  std::string_view source_;
  const char* context_ = "input";
  size_t pos_ = 0;
};

}  // namespace hprof::detail
