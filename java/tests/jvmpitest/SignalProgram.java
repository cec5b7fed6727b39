// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * Prints READY, waits for a line on stdin (the test signals the process meanwhile), then waits
 * (bounded) until the agent has seen a data-dump and a data-reset request.
 */
public class SignalProgram {
  public static void main(String[] args) throws Exception {
    Agent.hook(0, 0, null); // load the agent's natives before signalling starts
    System.out.println("READY");
    System.out.flush();
    String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
    Facts.fact("FACT", "stdin", line);
    Facts.await(() -> Agent.hook(1, 0, null) > 0 && Agent.hook(2, 0, null) > 0, 20_000);
    Facts.fact("FACT", "dumps", Agent.hook(1, 0, null), "resets", Agent.hook(2, 0, null));
  }
}
