// SPDX-License-Identifier: Apache-2.0
/* A library that is no JVMPI agent: it has no JVM_OnLoad. */
int jvmpitest_not_an_agent(void);
int jvmpitest_not_an_agent(void) {
  return 42;
}
