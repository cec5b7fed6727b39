// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * A thread that contends for a monitor after its end: the VM notifies joiners under the Thread
 * object's monitor, which main holds until the ending thread blocks on it. Prints whether that
 * happened, so a test knows the case was exercised.
 */
public final class LateContentionProgram {
  public static void main(String[] args) throws Exception {
    Thread worker = new Thread(() -> {}, "jvmpitest-late");
    boolean blocked;
    synchronized (worker) {
      worker.start();
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (worker.getState() != Thread.State.BLOCKED && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      blocked = worker.getState() == Thread.State.BLOCKED;
    }
    worker.join();
    System.out.println("LATE blocked=" + blocked);
  }
}
