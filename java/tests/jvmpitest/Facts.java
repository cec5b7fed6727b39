// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** What the test programs know for certain, printed in the agents' log format for the tests. */
public final class Facts {
  private Facts() {}

  /** The source line of the caller: the truth the agents' line numbers are compared with. */
  public static int line() {
    return new Throwable().getStackTrace()[1].getLineNumber();
  }

  /** Prints "TAG\tkey=value..." on one line. */
  public static void fact(String tag, Object... keyValues) {
    StringBuilder sb = new StringBuilder(tag);
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      sb.append('\t').append(keyValues[i]).append('=').append(keyValues[i + 1]);
    }
    synchronized (System.out) {
      System.out.println(sb);
      System.out.flush();
    }
  }

  /**
   * Polls a condition until it holds or the bound passes. Parks rather than sleeps: Thread.sleep
   * would itself produce JVMPI monitor events.
   */
  public static boolean await(BooleanSupplier condition, long timeoutMs) {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) return false;
      LockSupport.parkNanos(1_000_000L);
    }
    return true;
  }

  /** Waits until a thread is in the given state (e.g. BLOCKED on a monitor); fails loudly. */
  public static void awaitState(Thread t, Thread.State state) {
    if (!await(() -> t.getState() == state, 20_000)) {
      throw new AssertionError(t.getName() + " never reached " + state + ", is " + t.getState());
    }
  }
}
