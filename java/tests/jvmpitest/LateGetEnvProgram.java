// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/** Fetches the JVMPI table from JNI code (GetJavaVM, then GetEnv) long after JVM_OnLoad. */
public class LateGetEnvProgram {
  /** Returns {GetEnv's result, the table pointer, the table's version field}. */
  static native long[] jvmpiFromJni(int version);

  public static void main(String[] args) {
    System.load(System.getProperty("jvmpitest.native"));
    int[] versions = {0x10000001, 0x10000002, 0x10000003, 0x10000077};
    for (int version : versions) {
      long[] r = jvmpiFromJni(version);
      Facts.fact(
          "JNI",
          "version", "0x" + Integer.toHexString(version),
          "rc", r[0],
          "ptr", "0x" + Long.toHexString(r[1]),
          "table_version", "0x" + Long.toHexString(r[2]));
    }
  }
}
