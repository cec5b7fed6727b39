// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/** Lets the agent run its raw-monitor scenario on two system threads (hook 1). */
public class RawMonitorProgram {
  public static void main(String[] args) {
    Facts.fact("FACT", "scenario_done", Agent.hook(1, 0, null) == 1);
  }
}
