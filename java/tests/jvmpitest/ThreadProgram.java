// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Starts threads with known names in named thread groups (one nested), each of which waits on a
 * monitor and sleeps, so events carry its env_id; prints each thread's name, group and parent.
 */
public class ThreadProgram {
  static final Object lock = new Object();

  static class Payload {
    static int touched;
  }

  static void report(Thread t) {
    ThreadGroup g = t.getThreadGroup();
    Facts.fact(
        "THREAD", "name", t.getName(), "group", g.getName(), "parent", g.getParent().getName());
  }

  public static void main(String[] args) throws Exception {
    ThreadGroup workers = new ThreadGroup("jvmpitest-workers");
    ThreadGroup inner = new ThreadGroup(workers, "jvmpitest-inner");
    Runnable task =
        () -> {
          try {
            synchronized (lock) {
              lock.wait(2);
            }
            Thread.sleep(2);
            if (Thread.currentThread().getName().equals("jvmpitest-w1")) Payload.touched++;
          } catch (InterruptedException e) {
            throw new RuntimeException(e);
          }
        };
    Thread[] threads = {
      new Thread(workers, task, "jvmpitest-w1"),
      new Thread(workers, task, "jvmpitest-w2"),
      new Thread(inner, task, "jvmpitest-w3"),
    };
    for (Thread t : threads) {
      report(t);
      t.start();
    }
    for (Thread t : threads) t.join();
    report(Thread.currentThread());
    Facts.fact("FACT", "joined", threads.length, "request_rc", Agent.hook(1, 0, Thread.currentThread()));
  }
}
