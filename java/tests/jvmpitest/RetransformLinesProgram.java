// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Call traces taken at one call site while its method runs its original code, then the code with
 * method hooks (METHOD_ENTRY enabled: the class is retransformed), then its original code again
 * (disabled). The hooks move every line of a method but its first, so a source line read from
 * one version's line table for another version's location is wrong. {@code early} is first traced
 * with its original code, {@code late} first with the hooks in. Prints each call's source line.
 */
public class RetransformLinesProgram {
  static long sink;
  static int earlyLine;
  static int lateLine;

  static void early(int n) {
    int x = n * 2;
    earlyLine = Facts.line(); Agent.hook(6, x, null);
    sink += x;
  }

  static void late(int n) {
    // One-byte loads only: the call sits 3 bytes into its line, closer than the entry hook's length,
    // so the hooked code's table gives its original location to the line before.
    Object none = null;
    int code = 6;
    long x = 101 + n * 3;
    Agent.hook(code, x, none); lateLine = Facts.line();
    sink += x;
  }

  public static void main(String[] args) {
    early(1);
    Facts.fact("ENABLE", "rc", Agent.hook(4, 0, null));
    early(2);
    late(1);
    Facts.fact("DISABLE", "rc", Agent.hook(5, 0, null));
    early(3);
    late(2);
    Facts.fact("LINE", "method", "jvmpitest.RetransformLinesProgram.early", "line", earlyLine);
    Facts.fact("LINE", "method", "jvmpitest.RetransformLinesProgram.late", "line", lateLine);
  }
}
