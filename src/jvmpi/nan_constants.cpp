// SPDX-License-Identifier: Apache-2.0
#include "nan_constants.h"

#include <jvmti.h>

#include "jvmti_access.h"

namespace jvmpi::nan_constants {
namespace {

uint64_t read_be(std::span<const uint8_t> b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | b[at + i];
  return v;
}

bool float_is_nan(uint32_t bits) {
  return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
}

bool double_is_nan(uint64_t bits) {
  return (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
         (bits & 0x000fffffffffffffull) != 0;
}

}  // namespace

bool in_pool(std::span<const uint8_t> entries, int count) {
  size_t at = 0;
  for (int index = 1; index < count; ++index) {
    if (at >= entries.size()) return false;
    const uint8_t tag = entries[at++];
    size_t size = 0;
    switch (tag) {
      case 1:  // Utf8
        if (at + 2 > entries.size()) return false;
        size = 2 + read_be(entries, at, 2);
        break;
      case 4:  // Float
        if (at + 4 > entries.size()) return false;
        if (float_is_nan(static_cast<uint32_t>(read_be(entries, at, 4)))) return true;
        size = 4;
        break;
      case 6:  // Double, two slots
        if (at + 8 > entries.size()) return false;
        if (double_is_nan(read_be(entries, at, 8))) return true;
        size = 8;
        ++index;
        break;
      case 5:  // Long, two slots
        size = 8;
        ++index;
        break;
      case 3:   // Integer
      case 9:   // Fieldref
      case 10:  // Methodref
      case 11:  // InterfaceMethodref
      case 12:  // NameAndType
      case 17:  // Dynamic
      case 18:  // InvokeDynamic
        size = 4;
        break;
      case 15:  // MethodHandle
        size = 3;
        break;
      case 7:   // Class
      case 8:   // String
      case 16:  // MethodType
      case 19:  // Module
      case 20:  // Package
        size = 2;
        break;
      default:
        return false;
    }
    at += size;
  }
  return false;
}

bool in_class_file(std::span<const uint8_t> class_file) {
  // magic, minor_version, major_version, constant_pool_count
  if (class_file.size() < 10) return false;
  return in_pool(class_file.subspan(10), static_cast<int>(read_be(class_file, 8, 2)));
}

bool in_loaded_class(jclass klass) {
  jint count = 0;
  jint size = 0;
  JvmtiPtr<unsigned char> bytes;
  if (jvmti()->GetConstantPool(klass, &count, &size, bytes.out()) != JVMTI_ERROR_NONE) return false;
  return in_pool(std::span<const uint8_t>(bytes.get(), static_cast<size_t>(size)), count);
}

}  // namespace jvmpi::nan_constants
