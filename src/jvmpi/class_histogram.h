// SPDX-License-Identifier: Apache-2.0
// ClassHistogram of the extension interface (jvmpi_ext.h): the live objects per class, as
// `jcmd GC.class_histogram` counts them, for an agent that starts in a running VM.
#pragma once

#include <jvmpi_ext.h>

namespace jvmpi::class_histogram {

jint JNICALL class_histogram(JVMPIExt_ClassCountHandler handler, void* arg);

}  // namespace jvmpi::class_histogram
