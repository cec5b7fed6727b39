// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Threads are inside methods (one waits on a monitor, one is blocked entering it, main is in
 * main) when the agent enables METHOD_ENTRY (hook 1), which instruments the classes already
 * loaded; the agent then takes every thread's stack and a monitor dump (hook 2).
 */
public class RetransformProgram {
  private static final Object LOCK = new Object();
  private static boolean released;

  static void waitInside() {
    synchronized (LOCK) {
      while (!released) {
        try {
          LOCK.wait();
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Thread waiter = new Thread(RetransformProgram::waitInside, "jvmpitest-waiter");
    waiter.start();
    Facts.awaitState(waiter, Thread.State.WAITING);
    Thread blocked;
    synchronized (LOCK) {
      blocked = new Thread(RetransformProgram::waitInside, "jvmpitest-blocked");
      blocked.start();
      Facts.awaitState(blocked, Thread.State.BLOCKED);
      Facts.fact("FACT", "enable_rc", Agent.hook(1, 0, null));
      Facts.fact("FACT", "dump_rc", Agent.hook(2, 0, null));
      released = true;
      LOCK.notifyAll();
    }
    waiter.join();
    blocked.join();
    Facts.fact("FACT", "after_rc", Agent.hook(2, 0, null));
  }
}
