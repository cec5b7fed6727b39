// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/** Starts a thread before, while and after the agent has THREAD_START disabled. */
public class EventsProgram {
  static void runThread(String name) throws InterruptedException {
    Thread t =
        new Thread(name) {
          @Override
          public void run() {}
        };
    t.start();
    t.join();
  }

  public static void main(String[] args) throws Exception {
    runThread("jvmpitest-before");
    Facts.fact("FACT", "disable_rc", Agent.hook(1, 0, null));
    runThread("jvmpitest-during");
    Facts.fact("FACT", "enable_rc", Agent.hook(2, 0, null));
    runThread("jvmpitest-after");
  }
}
