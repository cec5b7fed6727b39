// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Asks the agent for call traces at known lines: its own (main -> probe -> Agent.hook) and that
 * of a thread waiting in targetInner (run -> targetOuter -> targetInner -> Object.wait). Prints
 * the source line of every call on those stacks.
 */
public class TraceProgram {
  static final Object lock = new Object();
  static volatile boolean release;
  static volatile int targetLine;
  static volatile int targetOuterLine;
  static int probeLine;

  static void targetInner() throws InterruptedException {
    synchronized (lock) {
      while (!release) {
        targetLine = Facts.line(); lock.wait();
      }
    }
  }

  static void targetOuter() throws InterruptedException {
    targetOuterLine = Facts.line(); targetInner();
  }

  static void probe() {
    probeLine = Facts.line(); Agent.hook(1, 0, null);
  }

  public static void main(String[] args) throws Exception {
    Thread target =
        new Thread("jvmpitest-trace-target") {
          @Override
          public void run() {
            try {
              targetOuter();
            } catch (InterruptedException e) {
              throw new RuntimeException(e);
            }
          }
        };
    target.start();
    Facts.await(() -> targetLine != 0, 20_000);
    Facts.awaitState(target, Thread.State.WAITING);
    int mainLine = Facts.line(); probe();
    Facts.fact("LINE", "method", "jvmpitest.TraceProgram.probe", "line", probeLine);
    Facts.fact("LINE", "method", "jvmpitest.TraceProgram.main", "line", mainLine);
    Facts.fact("LINE", "method", "jvmpitest.TraceProgram.targetInner", "line", targetLine);
    Facts.fact("LINE", "method", "jvmpitest.TraceProgram.targetOuter", "line", targetOuterLine);
    synchronized (lock) {
      release = true;
      lock.notifyAll();
    }
    target.join();
    // After join the thread's THREAD_END has been delivered: its env_id names no thread now.
    Agent.hook(3, 0, null);
  }
}
