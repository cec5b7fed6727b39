// SPDX-License-Identifier: Apache-2.0
// The extension table (jvmpi_ext.h) that GetEnv hands out for JVMPI_EXT_VERSION_1.
#pragma once

#include <jvmpi_ext.h>

namespace jvmpi {

JVMPI_ExtInterface& extension_interface();

}  // namespace jvmpi
