// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Puts threads into known states — spinning, sleeping, blocked entering a monitor (one of them
 * also interrupted), waiting — then lets the agent's sampler thread look at them (hook 1).
 */
public class SamplerProgram {
  static final Object held = new Object();
  static final Object waitLock = new Object();
  static volatile boolean stop;
  static volatile long spins;
  static volatile boolean notified;

  public static void main(String[] args) throws Exception {
    Thread spinner =
        new Thread("jvmpitest-spinner") {
          @Override
          public void run() {
            while (!stop) spins++;
          }
        };
    Thread sleeper =
        new Thread("jvmpitest-sleeper") {
          @Override
          public void run() {
            try {
              Thread.sleep(120_000);
            } catch (InterruptedException expected) {
              // woken by main at the end
            }
          }
        };
    Runnable enterHeld =
        () -> {
          synchronized (held) {
            spins++;
          }
        };
    Thread blocked = new Thread(enterHeld, "jvmpitest-blocked");
    Thread interrupted = new Thread(enterHeld, "jvmpitest-interrupted");
    Thread waiter =
        new Thread("jvmpitest-waiter") {
          @Override
          public void run() {
            synchronized (waitLock) {
              while (!notified) {
                try {
                  waitLock.wait();
                } catch (InterruptedException e) {
                  throw new RuntimeException(e);
                }
              }
            }
          }
        };

    boolean sampled;
    synchronized (held) {
      spinner.start();
      sleeper.start();
      blocked.start();
      interrupted.start();
      waiter.start();
      Facts.await(() -> spins > 0, 20_000);
      Facts.awaitState(sleeper, Thread.State.TIMED_WAITING);
      Facts.awaitState(blocked, Thread.State.BLOCKED);
      Facts.awaitState(interrupted, Thread.State.BLOCKED);
      Facts.awaitState(waiter, Thread.State.WAITING);
      interrupted.interrupt();
      Facts.fact("FACT", "interrupted_flag", interrupted.isInterrupted());
      sampled = Agent.hook(1, 0, null) == 1;
      Facts.fact("FACT", "spinner_state", spinner.getState(), "sleeper_state", sleeper.getState());
    }
    stop = true;
    sleeper.interrupt();
    synchronized (waitLock) {
      notified = true;
      waitLock.notifyAll();
    }
    for (Thread t : new Thread[] {spinner, sleeper, blocked, interrupted, waiter}) t.join();
    Facts.fact("FACT", "sampled", sampled);
  }
}
