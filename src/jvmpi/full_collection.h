// SPDX-License-Identifier: Apache-2.0
// The full collections the runtime forces (JVMTI ForceGarbageCollection: the attach retiring every
// thread's allocation buffer, the class histogram, JVMPI RunGC) without resizing the program's
// heap. After a full collection HotSpot shrinks the heap towards MaxHeapFreeRatio (G1 and Serial:
// a warm 256 MiB heap holding 4 MiB live comes back as 20 MiB) and grows it again only as the
// program's collections get expensive: a profiler that forced one would leave the program
// collecting more often long after it detached (docs/attach.md, "Speed after detaching").
#pragma once

namespace jvmpi::full_collection {

// Collects with MaxHeapFreeRatio held at 100 (nothing to give back) and restores the flag's value
// after; when the VM does not show where the flag is, warns once and collects anyway. True when
// the collection ran.
bool run();

}  // namespace jvmpi::full_collection
