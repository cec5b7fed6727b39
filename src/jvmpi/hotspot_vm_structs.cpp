// SPDX-License-Identifier: Apache-2.0
#include "hotspot_vm_structs.h"

#include <dlfcn.h>

#include <cstring>

namespace jvmpi::hotspot_vm_structs {
namespace {

// An exported uint64_t that holds an offset or a stride into the entries.
bool exported_long(const char* name, uint64_t* out) {
  const void* p = dlsym(RTLD_DEFAULT, name);
  if (p == nullptr) return false;
  std::memcpy(out, p, sizeof *out);
  return true;
}

struct Entry {
  bool is_static = false;
  uint64_t offset = 0;
  uintptr_t address = 0;
};

bool find(const char* type, const char* field, Entry* out) {
  const void* table_symbol = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
  uint64_t type_name = 0, field_name = 0, is_static = 0, offset = 0, address = 0, stride = 0;
  if (table_symbol == nullptr ||
      !exported_long("gHotSpotVMStructEntryTypeNameOffset", &type_name) ||
      !exported_long("gHotSpotVMStructEntryFieldNameOffset", &field_name) ||
      !exported_long("gHotSpotVMStructEntryIsStaticOffset", &is_static) ||
      !exported_long("gHotSpotVMStructEntryOffsetOffset", &offset) ||
      !exported_long("gHotSpotVMStructEntryAddressOffset", &address) ||
      !exported_long("gHotSpotVMStructEntryArrayStride", &stride) || stride == 0) {
    return false;
  }
  const char* entry = nullptr;
  std::memcpy(&entry, table_symbol, sizeof entry);
  if (entry == nullptr) return false;
  // The table ends with an entry whose type name is null; bounded in case it does not.
  for (int i = 0; i < 100000; ++i, entry += stride) {
    const char* t = nullptr;
    const char* f = nullptr;
    std::memcpy(&t, entry + type_name, sizeof t);
    if (t == nullptr) break;
    std::memcpy(&f, entry + field_name, sizeof f);
    if (f == nullptr || std::strcmp(t, type) != 0 || std::strcmp(f, field) != 0) continue;
    int32_t statik = 0;
    std::memcpy(&statik, entry + is_static, sizeof statik);
    out->is_static = statik != 0;
    std::memcpy(&out->offset, entry + offset, sizeof out->offset);
    void* where = nullptr;
    std::memcpy(&where, entry + address, sizeof where);
    out->address = reinterpret_cast<uintptr_t>(where);
    return true;
  }
  return false;
}

}  // namespace

bool type_size(const char* type, uint64_t* size) {
  const void* table_symbol = dlsym(RTLD_DEFAULT, "gHotSpotVMTypes");
  uint64_t type_name = 0, size_offset = 0, stride = 0;
  if (table_symbol == nullptr || !exported_long("gHotSpotVMTypeEntryTypeNameOffset", &type_name) ||
      !exported_long("gHotSpotVMTypeEntrySizeOffset", &size_offset) ||
      !exported_long("gHotSpotVMTypeEntryArrayStride", &stride) || stride == 0) {
    return false;
  }
  const char* entry = nullptr;
  std::memcpy(&entry, table_symbol, sizeof entry);
  if (entry == nullptr) return false;
  // As the field table: it ends with a null type name, bounded in case it does not.
  for (int i = 0; i < 100000; ++i, entry += stride) {
    const char* t = nullptr;
    std::memcpy(&t, entry + type_name, sizeof t);
    if (t == nullptr) break;
    if (std::strcmp(t, type) != 0) continue;
    std::memcpy(size, entry + size_offset, sizeof *size);
    return true;
  }
  return false;
}

bool static_address(const char* type, const char* field, uintptr_t* address) {
  Entry e;
  if (!find(type, field, &e) || !e.is_static || e.address == 0) return false;
  *address = e.address;
  return true;
}

bool field_offset(const char* type, const char* field, uint64_t* offset) {
  Entry e;
  if (!find(type, field, &e) || e.is_static) return false;
  *offset = e.offset;
  return true;
}

}  // namespace jvmpi::hotspot_vm_structs
