// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * MONITOR_CONTENDED_EXIT scenarios. In each, main owns a monitor, a named thread blocks entering
 * it, main waits until the agent has seen that thread's CONTENDED_ENTER (hook 2), then releases
 * the monitor in a different way: leaving a synchronized block, returning from a synchronized
 * method, from a static synchronized method (the class's monitor), and by an exception out of a
 * block and out of a method. Then a monitor released with no contender, and one released after
 * the agent disabled the event. Hook 1 tells the agent each monitor's label.
 */
public class ContendedExitProgram {
  static final class BlockLock {}

  static final class ThrowLock {}

  static final class Quiet {}

  static final class LateLock {}

  /** Its instance methods synchronize on the instance. */
  static final class Guarded {
    synchronized void touch() {}

    synchronized void holdWhile(Thread contender) {
      contender.start();
      awaitContended(this);
    }

    synchronized void throwWhile(Thread contender) {
      contender.start();
      awaitContended(this);
      throw new IllegalStateException("out of a synchronized method");
    }
  }

  /** Its static methods synchronize on StaticGuarded.class. */
  static final class StaticGuarded {
    static synchronized void touch() {}

    static synchronized void holdWhile(Thread contender) {
      contender.start();
      awaitContended(StaticGuarded.class);
    }
  }

  static void awaitContended(Object monitor) {
    if (!Facts.await(() -> Agent.hook(2, 0, monitor) > 0, 20_000)) {
      throw new AssertionError("the agent never saw a CONTENDED_ENTER on " + monitor);
    }
  }

  static Thread contender(String name, Object monitor) {
    return new Thread(
        () -> {
          synchronized (monitor) {
            monitor.hashCode();
          }
        },
        name);
  }

  /** Leaves a synchronized block on the monitor once the named thread is blocked entering it. */
  static void releaseBlockWhileContended(Object monitor, String contenderName)
      throws InterruptedException {
    Thread t = contender(contenderName, monitor);
    synchronized (monitor) {
      t.start();
      awaitContended(monitor);
    }
    t.join();
  }

  public static void main(String[] args) throws Exception {
    BlockLock block = new BlockLock();
    Agent.hook(1, 1, block);
    releaseBlockWhileContended(block, "jvmpitest-c1");

    Guarded guarded = new Guarded();
    Agent.hook(1, 2, guarded);
    Thread t2 = new Thread(guarded::touch, "jvmpitest-c2");
    guarded.holdWhile(t2);
    t2.join();

    Thread t3 = new Thread(StaticGuarded::touch, "jvmpitest-c3");
    StaticGuarded.holdWhile(t3);
    t3.join();

    ThrowLock thrown = new ThrowLock();
    Agent.hook(1, 4, thrown);
    Thread t4 = contender("jvmpitest-c4", thrown);
    try {
      synchronized (thrown) {
        t4.start();
        awaitContended(thrown);
        if (t4.isAlive()) throw new IllegalStateException("out of a synchronized block");
      }
    } catch (IllegalStateException expected) {
      Facts.fact("FACT", "block_threw", 1);
    }
    t4.join();

    Guarded throwing = new Guarded();
    Agent.hook(1, 5, throwing);
    Thread t5 = new Thread(throwing::touch, "jvmpitest-c5");
    try {
      throwing.throwWhile(t5);
    } catch (IllegalStateException expected) {
      Facts.fact("FACT", "method_threw", 1);
    }
    t5.join();

    Quiet quiet = new Quiet();
    Agent.hook(1, 6, quiet);
    for (int i = 0; i < 3; i++) {
      synchronized (quiet) {
        quiet.hashCode();
      }
    }

    Agent.hook(3, 0, null);
    LateLock late = new LateLock();
    Agent.hook(1, 7, late);
    releaseBlockWhileContended(late, "jvmpitest-c7");
    Facts.fact("FACT", "done", 1);
  }
}
