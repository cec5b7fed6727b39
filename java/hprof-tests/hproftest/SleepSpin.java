// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Known answer for cpu=times: nap() sleeps and spin() computes, each for the same wall time, on
 * the main thread. nap() sleeps in 2 ms pieces (napOnce), spin() calls step() millions of times,
 * so both the long intervals (a sleep between two events) and the short ones (events a few hundred
 * nanoseconds apart) are timed. The program measures each phase's CPU time itself (the JVM's
 * thread CPU clock) and prints it: cpu=times must charge nap() about that (near 0) and spin() its
 * real CPU share, whatever the wall time was.
 */
public final class SleepSpin {
  static volatile long sink;

  static long step(long x) {
    return x * 6364136223846793005L + 1442695040888963407L;
  }

  static long spin(long millis) {
    final long end = System.nanoTime() + millis * 1_000_000L;
    long x = 1;
    while (System.nanoTime() < end) {
      for (int i = 0; i < 200; i++) x = step(x);
    }
    return x;
  }

  static void napOnce() throws InterruptedException {
    Thread.sleep(2);
  }

  static void nap(long millis) throws InterruptedException {
    final long end = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() < end) napOnce();
  }

  public static void main(String[] args) throws Exception {
    final long millis = args.length > 0 ? Long.parseLong(args[0]) : 400;
    ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    bean.getCurrentThreadCpuTime();  // loads what the measurement needs before it is used

    long cpu = bean.getCurrentThreadCpuTime();
    long wall = System.nanoTime();
    nap(millis);
    final long napCpu = bean.getCurrentThreadCpuTime() - cpu;
    final long napWall = System.nanoTime() - wall;

    cpu = bean.getCurrentThreadCpuTime();
    wall = System.nanoTime();
    sink = spin(millis);
    final long spinCpu = bean.getCurrentThreadCpuTime() - cpu;
    final long spinWall = System.nanoTime() - wall;

    System.out.println("NAP cpu_us=" + napCpu / 1000 + " wall_us=" + napWall / 1000);
    System.out.println("SPIN cpu_us=" + spinCpu / 1000 + " wall_us=" + spinWall / 1000);
    System.out.println("SLEEPSPIN DONE " + (sink != 0));
  }
}
