// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/** Prints the strings two classes return; the agent rewrites one of them while it loads. */
public class HookProgram {
  static class Target {
    static String value() {
      return "JVMPITEST_ORIGINAL";
    }
  }

  static class Untouched {
    static String value() {
      return "JVMPITEST_UNTOUCHED";
    }
  }

  public static void main(String[] args) {
    Facts.fact("VALUE", "class", "Target", "value", Target.value());
    Facts.fact("VALUE", "class", "Untouched", "value", Untouched.value());
  }
}
