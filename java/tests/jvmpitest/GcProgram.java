// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Forces three collections with System.gc() and one with the agent's RunGC (hook 2), each time
 * waiting (bounded) until the agent has seen one more GC_FINISH (hook 1).
 */
public class GcProgram {
  static Object[] keep;

  static boolean collect(Runnable how) {
    long before = Agent.hook(1, 0, null);
    how.run();
    return Facts.await(() -> Agent.hook(1, 0, null) > before, 10_000);
  }

  public static void main(String[] args) {
    keep = new Object[10_000];
    for (int i = 0; i < keep.length; i++) keep[i] = new int[i % 64];
    int observed = 0;
    for (int i = 0; i < 3; i++) {
      if (collect(System::gc)) observed++;
    }
    if (collect(() -> Agent.hook(2, 0, null))) observed++;
    Facts.fact("FACT", "forced", 4, "observed", observed, "live_arrays", keep.length);
  }
}
