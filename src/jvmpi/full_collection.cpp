// SPDX-License-Identifier: Apache-2.0
#include "full_collection.h"

#include <jvmti.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

#include "hotspot_vm_structs.h"
#include "jvmti_access.h"
#include "log.h"

namespace jvmpi::full_collection {
namespace {

constexpr uintptr_t kNoShrinking = 100;  // percent of the heap that may be free after a collection

std::mutex g_lock;  // one collection with the flag held at a time

// Where this VM keeps MaxHeapFreeRatio (a uintx), found in HotSpot's flag table as its
// Serviceability Agent finds flags (JVMFlag::flags, numFlags, _name, _addr); null when the VM does
// not describe it. The flag is manageable (`jcmd VM.set_flag` may change it while the VM runs) and
// is read by the collector inside its collection, after this thread has written it.
uintptr_t* find_flag() {
  uintptr_t table_address = 0, count_address = 0;
  uint64_t name_offset = 0, value_offset = 0, entry_size = 0;
  if (!hotspot_vm_structs::static_address("JVMFlag", "flags", &table_address) ||
      !hotspot_vm_structs::static_address("JVMFlag", "numFlags", &count_address) ||
      !hotspot_vm_structs::field_offset("JVMFlag", "_name", &name_offset) ||
      !hotspot_vm_structs::field_offset("JVMFlag", "_addr", &value_offset) ||
      !hotspot_vm_structs::type_size("JVMFlag", &entry_size) || entry_size == 0) {
    return nullptr;
  }
  const char* entry = nullptr;
  size_t count = 0;
  std::memcpy(&entry, reinterpret_cast<const void*>(table_address), sizeof entry);
  std::memcpy(&count, reinterpret_cast<const void*>(count_address), sizeof count);
  if (entry == nullptr || count > 100000) return nullptr;
  for (size_t i = 0; i < count; ++i, entry += entry_size) {
    const char* name = nullptr;
    std::memcpy(&name, entry + name_offset, sizeof name);
    if (name == nullptr || std::strcmp(name, "MaxHeapFreeRatio") != 0) continue;
    void* value = nullptr;
    std::memcpy(&value, entry + value_offset, sizeof value);
    return static_cast<uintptr_t*>(value);
  }
  return nullptr;
}

uintptr_t* flag() {
  static uintptr_t* const address = find_flag();
  return address;
}

bool collect() {
  return jvmti_ok(jvmti()->ForceGarbageCollection(), "ForceGarbageCollection");
}

}  // namespace

bool run() {
  std::lock_guard<std::mutex> lock(g_lock);
  uintptr_t* ratio = flag();
  if (ratio == nullptr || *ratio > kNoShrinking) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      log_warning(
          "this VM does not show where MaxHeapFreeRatio is: a forced collection may shrink "
          "the heap");
    }
    return collect();
  }
  const uintptr_t before = *ratio;
  *ratio = kNoShrinking;
  const bool ran = collect();
  *ratio = before;
  return ran;
}

}  // namespace jvmpi::full_collection
