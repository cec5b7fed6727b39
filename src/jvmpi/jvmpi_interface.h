// SPDX-License-Identifier: Apache-2.0
// The JVMPI function table handed to the agent.
#pragma once

#include <jvmpi.h>

namespace jvmpi {

// The single table (one agent per VM). Its version is JVMPI_VERSION_1_2.
JVMPI_Interface& jvmpi_interface();

// Whether GetEnv should answer `version` with the JVMPI table.
bool is_jvmpi_version(jint version);

}  // namespace jvmpi
