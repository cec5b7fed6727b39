// SPDX-License-Identifier: Apache-2.0
// HotSpot's exported description of its own data structures (gHotSpotVMStructs, the table its
// Serviceability Agent reads): where a static field lives, or at which offset a field lies. The CPU
// sampler reads two things through it, outside its signal handler: the code cache's bounds and
// the layout of a thread's frame anchor.
#pragma once

#include <cstdint>

namespace jvmpi::hotspot_vm_structs {

// The address of static field `type`::`field`; false when this VM does not describe it.
bool static_address(const char* type, const char* field, uintptr_t* address);
// The offset of non-static field `type`::`field`; false when this VM does not describe it.
bool field_offset(const char* type, const char* field, uint64_t* offset);

}  // namespace jvmpi::hotspot_vm_structs
