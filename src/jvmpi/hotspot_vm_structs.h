// SPDX-License-Identifier: Apache-2.0
// HotSpot's exported description of its own data structures (gHotSpotVMStructs and
// gHotSpotVMTypes, the tables its Serviceability Agent reads): where a static field lives, at which
// offset a field lies, how large a type is. The CPU sampler reads the code cache's bounds and the
// layout of a thread's frame anchor through it, outside its signal handler; the runtime's forced
// collections find a VM flag's value (full_collection.h).
#pragma once

#include <cstdint>

namespace jvmpi::hotspot_vm_structs {

// The address of static field `type`::`field`; false when this VM does not describe it.
bool static_address(const char* type, const char* field, uintptr_t* address);
// The offset of non-static field `type`::`field`; false when this VM does not describe it.
bool field_offset(const char* type, const char* field, uint64_t* offset);
// The size of `type` (gHotSpotVMTypes); false when this VM does not describe it.
bool type_size(const char* type, uint64_t* size);

}  // namespace jvmpi::hotspot_vm_structs
