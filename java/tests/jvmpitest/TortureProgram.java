// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.util.function.IntSupplier;

/**
 * Drives the API torture agent: lets an object go so that its ID turns stale, starts the thread
 * whose THREAD_START runs a battery, waits (bounded) until the batteries of every earlier stage
 * ran, runs one from a JNI native, and ends the VM with ProfilerExit(7).
 */
public class TortureProgram {
  static final int STAGES_BEFORE_JNI = 0b111111; // batch .. gc_finish

  public static void main(String[] args) throws Exception {
    Object victim = new int[1000];
    Facts.fact("FACT", "victim_id", Agent.hook(1, 0, victim));
    victim = null;
    boolean freed =
        Facts.await(
            () -> {
              System.gc();
              return Agent.hook(2, 0, null) == 1;
            },
            20_000);
    Facts.fact("FACT", "victim_freed", freed);

    Thread worker = new Thread(() -> {}, "jvmpitest-torture-worker");
    worker.start();
    worker.join();
    // A lambda (a hidden class) and arrays of several kinds, alive while the batteries dump.
    IntSupplier lambda = () -> 42;
    Object[] kinds = {new int[3], new String[2][2], lambda, TortureProgram.class};
    boolean stages =
        Facts.await(
            () -> {
              System.gc();
              return (Agent.hook(5, 0, null) & STAGES_BEFORE_JNI) == STAGES_BEFORE_JNI;
            },
            20_000);
    Facts.fact("FACT", "stages_before_jni", stages, "kinds", kinds.length + lambda.getAsInt());
    Facts.fact("FACT", "jni", Agent.hook(3, 0, null));
    Agent.hook(4, 7, null);
    Facts.fact("FACT", "after_profiler_exit", 1);
  }
}
