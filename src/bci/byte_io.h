// SPDX-License-Identifier: Apache-2.0
// Bounds-checked big-endian reading and writing of class-file data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bci.h"

namespace bci {

// Reads from a span that sits at `base` in the original input, so errors report file offsets.
class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> data, size_t base = 0) : data_(data), base_(base) {}

  size_t position() const { return pos_; }
  size_t file_offset() const { return base_ + pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  uint8_t u1(const char* what) {
    need(1, what);
    return data_[pos_++];
  }
  uint16_t u2(const char* what) {
    need(2, what);
    uint16_t v = static_cast<uint16_t>(data_[pos_] << 8 | data_[pos_ + 1]);
    pos_ += 2;
    return v;
  }
  uint32_t u4(const char* what) {
    need(4, what);
    uint32_t v = static_cast<uint32_t>(data_[pos_]) << 24 |
                 static_cast<uint32_t>(data_[pos_ + 1]) << 16 |
                 static_cast<uint32_t>(data_[pos_ + 2]) << 8 | data_[pos_ + 3];
    pos_ += 4;
    return v;
  }
  std::span<const uint8_t> bytes(size_t n, const char* what) {
    need(n, what);
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  void skip(size_t n, const char* what) { bytes(n, what); }

  [[noreturn]] void fail(const std::string& problem) const {
    throw ClassFormatError(problem, file_offset());
  }

 private:
  void need(size_t n, const char* what) const {
    if (n > data_.size() - pos_) {
      throw ClassFormatError(std::string("truncated ") + what, file_offset());
    }
  }

  std::span<const uint8_t> data_;
  size_t base_;
  size_t pos_ = 0;
};

class ByteWriter {
 public:
  void u1(uint32_t v) { out_.push_back(static_cast<uint8_t>(v)); }
  void u2(uint32_t v) {
    u1(v >> 8);
    u1(v);
  }
  void u4(uint32_t v) {
    u2(v >> 16);
    u2(v);
  }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void bytes(const std::string& s) { out_.insert(out_.end(), s.begin(), s.end()); }
  size_t size() const { return out_.size(); }
  void patch_u2(size_t at, uint32_t v) {
    out_[at] = static_cast<uint8_t>(v >> 8);
    out_[at + 1] = static_cast<uint8_t>(v);
  }
  void patch_u4(size_t at, uint32_t v) {
    patch_u2(at, v >> 16);
    patch_u2(at + 2, v);
  }
  std::vector<uint8_t>& data() { return out_; }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

}  // namespace bci
