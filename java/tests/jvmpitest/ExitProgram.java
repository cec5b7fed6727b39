// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Asks the agent to call ProfilerExit(7) from a thread of its own, then waits to be ended. */
public class ExitProgram {
  public static void main(String[] args) throws Exception {
    // The VM may be gone before this thread runs again, so nothing here is printed first.
    Agent.hook(1, 0, null);
    // Nothing counts this down: the VM must end while main waits (bounded, to fail cleanly).
    new CountDownLatch(1).await(30, TimeUnit.SECONDS);
    Facts.fact("NOT_EXITED");
  }
}
