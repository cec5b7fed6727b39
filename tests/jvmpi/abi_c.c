// SPDX-License-Identifier: Apache-2.0
/* Measures abi_facts.def with the C compiler: agents are C programs, so the layout they see is
 * the one that matters most. abi_test.cpp compares these numbers with the expected ones. */
#include "abi_c.h"

#include <jvmpi.h>
#include <stddef.h>

static const struct abi_measure facts[] = {
#define CONST(name, value) {#name, (long long)(name)},
#define SIZE(type, bytes) {"sizeof(" #type ")", (long long)sizeof(type)},
#define ALIGN(type, bytes) {"_Alignof(" #type ")", (long long)_Alignof(type)},
#define OFF(type, member, offset) \
  {"offsetof(" #type ", " #member ")", (long long)offsetof(type, member)},
#include "abi_facts.def"
#undef CONST
#undef SIZE
#undef ALIGN
#undef OFF
};

const struct abi_measure* abi_c_measures(size_t* count) {
  *count = sizeof facts / sizeof facts[0];
  return facts;
}
