// SPDX-License-Identifier: Apache-2.0
#include "dump_buffer.h"

#include <jvmpi.h>
#include <sys/mman.h>

namespace jvmpi {
namespace {
// Huge pages pay off for a heap dump, not for an object's or the monitors' dump: the first write
// to one zeroes 2 MiB.
constexpr size_t kHugePagesFrom = size_t{8} << 20;
}  // namespace

DumpBuffer::~DumpBuffer() {
  if (data_ != nullptr) munmap(data_, capacity_);
}

char* DumpBuffer::reserve(size_t n) {
  if (!failed_ && size_ + n > capacity_) {
    size_t capacity = capacity_ == 0 ? size_t{1} << 20 : capacity_;
    while (capacity < size_ + n) capacity *= 2;
    void* p = data_ == nullptr ? mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                               : mremap(data_, capacity_, capacity, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
      failed_ = true;
    } else {
      data_ = static_cast<char*>(p);
      capacity_ = capacity;
      // A heap dump writes tens of bytes per object: in 4 KiB pages that is a page fault every
      // hundred objects, a cost on the order of the walk's own (measured under a hypervisor). Huge
      // pages, where the system grants them on request, fault once per 2 MiB. Advice only: on
      // failure the buffer works as before.
      if (capacity_ >= kHugePagesFrom) madvise(data_, capacity_, MADV_HUGEPAGE);
    }
  }
  if (failed_) {
    // Out of memory: the walk carries on harmlessly into scratch space and the dump is reported
    // as failed rather than delivered incomplete.
    if (scratch_.size() < n) scratch_.resize(n);
    return scratch_.data();
  }
  char* p = data_ + size_;
  size_ += n;
  return p;
}

void DumpBuffer::deliver_held() {
  if (!deliver_ || size_ == 0) return;
  if (!stopped_ && !failed_ && !deliver_(data_, data_ + size_)) stopped_ = true;
  size_ = 0;
}

size_t value_size(jint type_code) {
  switch (type_code) {
    case JVMPI_BOOLEAN:
    case JVMPI_BYTE:
      return 1;
    case JVMPI_CHAR:
    case JVMPI_SHORT:
      return 2;
    case JVMPI_INT:
    case JVMPI_FLOAT:
      return 4;
    case JVMPI_LONG:
    case JVMPI_DOUBLE:
      return 8;
    default:
      return sizeof(void*);
  }
}

void put_value(char* out, jint type_code, const jvalue& v) {
  uint64_t bits = 0;
  size_t n = value_size(type_code);
  switch (type_code) {
    case JVMPI_BOOLEAN:
      bits = v.z;
      break;
    case JVMPI_BYTE:
      bits = static_cast<uint8_t>(v.b);
      break;
    case JVMPI_CHAR:
      bits = v.c;
      break;
    case JVMPI_SHORT:
      bits = static_cast<uint16_t>(v.s);
      break;
    case JVMPI_INT:
      bits = static_cast<uint32_t>(v.i);
      break;
    case JVMPI_FLOAT: {
      uint32_t f;
      std::memcpy(&f, &v.f, 4);
      bits = f;
      break;
    }
    case JVMPI_LONG:
      bits = static_cast<uint64_t>(v.j);
      break;
    case JVMPI_DOUBLE:
      std::memcpy(&bits, &v.d, 8);
      break;
    default:
      return;
  }
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>(bits >> (8 * (n - 1 - i)));
}

}  // namespace jvmpi
