// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Starts one short-lived worker, "jvmpitest-ending", that the agent (suspend_end_agent.c)
 * suspends inside its THREAD_END handler and resumes only after the runtime has forgotten the
 * thread. Prints whether the worker ended (it cannot end while suspended), then waits for the
 * agent's system thread to finish (hook 1).
 */
public class SuspendEndProgram {
  public static void main(String[] args) throws Exception {
    long[] sum = new long[1];
    Thread worker =
        new Thread(
            () -> {
              for (int i = 0; i < 10_000; i++) sum[0] += i;
            },
            "jvmpitest-ending");
    // A worker left suspended must not also keep the VM from exiting: the test should see
    // ended=0, not only a time-out.
    worker.setDaemon(true);
    worker.start();
    worker.join(20_000);
    Facts.fact("WORKER", "ended", worker.isAlive() ? 0 : 1, "sum", sum[0]);
    Facts.fact("AGENT", "done", Agent.hook(1, 0, null));
  }
}
