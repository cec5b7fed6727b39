// SPDX-License-Identifier: Apache-2.0
// Internal: big-endian loads and a bounds-checked cursor over the mapped dump. Every read is
// checked against the end of the enclosing record; a short read throws analysis::Error naming the
// byte offset, the record and what was being read.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "analysis.h"

namespace analysis::detail {

inline uint32_t load_u4(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
// Ids are 4 or 8 bytes: one load each, not a loop of byte loads (this is in every pass's inner
// loop); other sizes (u2, header fields) byte by byte.
inline uint64_t load_be(const uint8_t* p, size_t n) {
  if (n == 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return __builtin_bswap64(v);
  }
  if (n == 4) return load_u4(p);
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

[[noreturn]] inline void fail_at(uint64_t offset, const char* record, uint64_t record_offset,
                                 const std::string& problem) {
  char where[160];
  std::snprintf(where, sizeof where,
                "byte offset %llu (%s record at %llu): ", static_cast<unsigned long long>(offset),
                record, static_cast<unsigned long long>(record_offset));
  throw Error(where + problem);
}

class Cursor {
 public:
  // Reads file[pos, end) where `file` is the whole mapped dump.
  Cursor(std::span<const uint8_t> file, uint64_t pos, uint64_t end, uint32_t id_size)
      : file_(file), pos_(pos), end_(end), id_size_(id_size) {}

  void set_record(const char* name, uint64_t offset) {
    record_ = name;
    record_offset_ = offset;
  }
  uint64_t pos() const { return pos_; }
  uint64_t end() const { return end_; }
  uint64_t remaining() const { return end_ - pos_; }
  bool at_end() const { return pos_ >= end_; }
  uint32_t id_size() const { return id_size_; }

  // The checks stay inline (they are in pass 1's inner loop); building the message does not.
  void need(uint64_t n, const char* what) const {
    if (n > end_ - pos_) [[unlikely]]
      fail_short(n, what);
  }
  // Checks that count items of item_size bytes fit, without overflowing.
  void need_items(uint64_t count, uint64_t item_size, const char* what) const {
    if (item_size != 0 && count > (end_ - pos_) / item_size) [[unlikely]]
      fail_items(count, item_size, what);
  }
  uint8_t u1(const char* what) {
    need(1, what);
    return file_[pos_++];
  }
  uint16_t u2(const char* what) { return static_cast<uint16_t>(be(2, what)); }
  uint32_t u4(const char* what) { return static_cast<uint32_t>(be(4, what)); }
  uint64_t u8(const char* what) { return be(8, what); }
  uint64_t id(const char* what) { return be(id_size_, what); }
  void skip(uint64_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  const uint8_t* here() const { return file_.data() + pos_; }

  [[noreturn]] void fail(const std::string& problem) const {
    fail_at(pos_, record_, record_offset_, problem);
  }
  // A read past the end of the file itself is a cut-off file, and said so; past the end of a
  // record inside the file, a record that does not hold what it claims.
  [[noreturn, gnu::cold, gnu::noinline]] void fail_short(uint64_t n, const char* what) const {
    fail(std::string(what) + " needs " + std::to_string(n) + " bytes, " +
         (end_ == file_.size()
              ? "but the file ends at byte " + std::to_string(end_) + " (truncated?)"
              : std::to_string(end_ - pos_) + " left in the record"));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_items(uint64_t count, uint64_t item_size,
                                                         const char* what) const {
    fail(std::string(what) + ": " + std::to_string(count) + " items of " +
         std::to_string(item_size) + " bytes do not fit in the " + std::to_string(end_ - pos_) +
         " bytes left in the " +
         (end_ == file_.size()
              ? "file, which ends at byte " + std::to_string(end_) + " (truncated?)"
              : std::string("record")));
  }

 private:
  uint64_t be(size_t n, const char* what) {
    need(n, what);
    uint64_t v = load_be(file_.data() + pos_, n);
    pos_ += n;
    return v;
  }

  std::span<const uint8_t> file_;
  uint64_t pos_, end_;
  uint32_t id_size_;
  const char* record_ = "file";
  uint64_t record_offset_ = 0;
};

// Size in bytes of a value of HPROF basic type `type` in the dump; 0 for an invalid code.
inline uint32_t dump_value_size(uint8_t type, uint32_t id_size) {
  switch (type) {
    case 2:
      return id_size;
    case 4:
    case 8:
      return 1;
    case 5:
    case 9:
      return 2;
    case 6:
    case 10:
      return 4;
    case 7:
    case 11:
      return 8;
    default:
      return 0;
  }
}
// Size of the value in the running VM (references as compressed oops).
inline uint32_t vm_value_size(uint8_t type) {
  return type == 2 ? 4 : dump_value_size(type, 4);
}

}  // namespace analysis::detail
