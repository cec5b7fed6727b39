// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/** The lines the tests read from a program's stdout. */
final class Facts {
  private Facts() {}

  static void fact(String key, Object value) {
    System.out.println("FACT " + key + "=" + value);
  }

  static String hex(long v) {
    return "0x" + Long.toHexString(v);
  }
}
