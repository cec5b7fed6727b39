// SPDX-License-Identifier: Apache-2.0
// A growable byte buffer for the heap, object and monitor dumps: integers big-endian (as JVMPI's
// dump formats require), IDs and pointers in native size and byte order. Backed by mmap/mremap so
// that growing a dump of a large heap moves pages instead of copying them, and memory goes back
// to the system as soon as the dump is delivered. A streamed dump (stream_to) hands its bytes on
// in chunks at record boundaries and reuses the same pages, so it never holds more than one chunk
// (or one record, if a record is larger).
#pragma once

#include <jni.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace jvmpi {

class DumpBuffer {
 public:
  DumpBuffer() = default;
  DumpBuffer(const DumpBuffer&) = delete;
  DumpBuffer& operator=(const DumpBuffer&) = delete;
  ~DumpBuffer();

  void u1(uint8_t v) { *reserve(1) = static_cast<char>(v); }
  void u2(uint16_t v) {
    char* p = reserve(2);
    p[0] = static_cast<char>(v >> 8);
    p[1] = static_cast<char>(v);
  }
  void u4(uint32_t v) {
    char* p = reserve(4);
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (24 - 8 * i));
  }
  void u8(uint64_t v) {
    u4(static_cast<uint32_t>(v >> 32));
    u4(static_cast<uint32_t>(v));
  }
  void id(const void* p) { std::memcpy(reserve(sizeof p), &p, sizeof p); }
  void id_from_tag(jlong tag) { id(reinterpret_cast<const void*>(static_cast<intptr_t>(tag))); }
  void bytes(const void* data, size_t n) {
    if (n > 0) std::memcpy(reserve(n), data, n);
  }
  // Appends n zero bytes and returns where they start (valid until the next append).
  char* zeros(size_t n) {
    char* p = reserve(n);
    std::memset(p, 0, n);
    return p;
  }
  // Appends n bytes for the caller to fill (valid until the next append).
  char* space(size_t n) { return reserve(n); }

  // From now on, once `chunk_bytes` are held, record_boundary() hands them to `deliver` and starts
  // over. When `deliver` answers false the rest is dropped and stopped() becomes true.
  using Deliver = std::function<bool(const char* begin, const char* end)>;
  void stream_to(size_t chunk_bytes, Deliver deliver) {
    chunk_bytes_ = chunk_bytes;
    deliver_ = std::move(deliver);
  }
  // Called where a record starts: a chunk always holds whole records.
  void record_boundary() {
    if (size_ >= chunk_bytes_) deliver_held();
  }
  // Streaming: hands on what is held (the end of the dump).
  void deliver_held();
  bool streaming() const { return static_cast<bool>(deliver_); }
  bool stopped() const { return stopped_; }

  char* begin() const { return data_; }
  char* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  // Whether growing ever failed (the dump is then incomplete and must not be delivered).
  bool failed() const { return failed_; }

 private:
  char* reserve(size_t n);

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool failed_ = false;
  std::vector<char> scratch_;
  size_t chunk_bytes_ = SIZE_MAX;  // one buffer unless streaming
  Deliver deliver_;
  bool stopped_ = false;
};

// Writes a primitive value of JVMPI type `type_code` (JVMPI_INT, ...) from a jvalue, big-endian.
void put_value(char* out, jint type_code, const jvalue& v);

// Size in a dump of a value of JVMPI type `type_code` (IDs for JVMPI_CLASS).
size_t value_size(jint type_code);

}  // namespace jvmpi
