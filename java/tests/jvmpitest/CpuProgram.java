// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Reads the agent's GetCurrentThreadCpuTime before and after spinning until the JDK's own
 * thread-CPU clock has advanced by 200 ms, and prints both pairs.
 */
public class CpuProgram {
  static volatile long sink;

  public static void main(String[] args) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long agentBefore = Agent.hook(2, 0, null);
    long mxBefore = mx.getCurrentThreadCpuTime();
    long wallBefore = System.nanoTime();
    long x = 1;
    while (mx.getCurrentThreadCpuTime() - mxBefore < 200_000_000L
        && System.nanoTime() - wallBefore < 20_000_000_000L) {
      for (int i = 0; i < 100_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    }
    sink = x;
    long mxAfter = mx.getCurrentThreadCpuTime();
    long agentAfter = Agent.hook(2, 0, null);
    long wallAfter = System.nanoTime();
    Facts.fact(
        "CPU",
        "agent_before", agentBefore,
        "agent_after", agentAfter,
        "mx_before", mxBefore,
        "mx_after", mxAfter,
        "wall", wallAfter - wallBefore);
  }
}
