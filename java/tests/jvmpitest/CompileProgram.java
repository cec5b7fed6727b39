// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Calls a small method until the agent has seen it compiled (bounded), run with -Xbatch; or (arg
 * "late") compiles it first and enables COMPILED_METHOD_LOAD afterwards.
 */
public class CompileProgram {
  static int hot(int x) {
    int a = x * 31 + 7;
    a ^= a >>> 7;
    a += a << 3;
    return a;
  }

  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("late")) {
      late();
      return;
    }
    long sum = 0;
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (Agent.hook(1, 0, null) == 0 && System.nanoTime() < deadline) {
      for (int i = 0; i < 20_000; i++) sum += hot(i);
    }
    Facts.fact("FACT", "compiled", Agent.hook(1, 0, null) > 0, "sum", sum);
  }

  /** Makes hot() hot (compiled at once under -Xbatch) first, and only then enables the event. */
  static void late() {
    long sum = 0;
    for (int i = 0; i < 200_000; i++) sum += hot(i);
    long rc = Agent.hook(2, 0, null);
    boolean seen = Facts.await(() -> Agent.hook(1, 0, null) > 0, 10_000);
    Facts.fact("FACT", "enable_rc", rc, "reported", seen, "sum", sum);
  }
}
