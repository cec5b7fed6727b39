// SPDX-License-Identifier: Apache-2.0
/* What the C compiler measured of jvmpi.h (see abi_c.c). */
#ifndef JVMPITEST_ABI_C_H
#define JVMPITEST_ABI_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct abi_measure {
  const char* what;
  long long value;
};

const struct abi_measure* abi_c_measures(size_t* count);

#ifdef __cplusplus
}
#endif

#endif
