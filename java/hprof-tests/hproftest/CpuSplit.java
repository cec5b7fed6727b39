// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;

/**
 * Known answer for cpu=samples: the main thread calls three equal methods picked at random 60/30/10
 * and, between calls, the short native call ThreadMXBean.getCurrentThreadCpuTime() (well under 1 %
 * of its CPU). Three threads idle all the while: one sleeping, one holding a lock (asleep inside
 * it), one blocked on that lock. Prints how often each method ran, the CPU each took (the thread's
 * CPU clock read before and after every call: the same native call), what the native call costs
 * (every 16th round reads the clock twice more, back to back) and the main thread's CPU time.
 * Args: the main thread's CPU budget in ms (default 2000).
 */
public final class CpuSplit {
  static final int WORK = 150_000;  // one call: ~200-400 us
  static volatile long sink;
  static final Object LOCK = new Object();

  // Three equal bodies: no calls inside, so each is the top frame while it runs.
  static long workA(long x) {
    for (int i = 0; i < WORK; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  static long workB(long x) {
    for (int i = 0; i < WORK; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  static long workC(long x) {
    for (int i = 0; i < WORK; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  // CPU each idle thread used in all (its own clock, read as the last thing it does): starting,
  // parking and waking take a little CPU, which a CPU-time sampler may rightly charge it with.
  static final long[] idleCpuNs = new long[3];

  static void sleepLong() {
    try {
      Thread.sleep(600_000);
    } catch (InterruptedException done) {
      // woken at the end
    }
  }

  static void recordIdleCpu(int which) {
    idleCpuNs[which] = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
  }

  public static void main(String[] args) throws Exception {
    final long budgetNs = (args.length > 0 ? Long.parseLong(args[0]) : 2000) * 1_000_000L;
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    final long cpuStart = mx.getCurrentThreadCpuTime();

    CountDownLatch idle = new CountDownLatch(2);
    Thread sleeper = new Thread(() -> {
      idle.countDown();
      sleepLong();
      recordIdleCpu(0);
    }, "Sleeper");
    Thread holder = new Thread(() -> {
      synchronized (LOCK) {
        idle.countDown();
        sleepLong();
      }
      recordIdleCpu(1);
    }, "Holder");
    sleeper.start();
    holder.start();
    idle.await();
    Thread blocked = new Thread(() -> {
      synchronized (LOCK) {
        sink++;
      }
      recordIdleCpu(2);
    }, "Blocked");
    blocked.start();
    while (blocked.getState() != Thread.State.BLOCKED) Thread.onSpinWait();

    SplittableRandom random = new SplittableRandom(12);
    long a = 0, b = 0, c = 0, x = 1;
    long cpuA = 0, cpuB = 0, cpuC = 0;
    long nativeCalls = 1, probes = 0, probeNs = 0, rounds = 0, exitNs = 0;
    long cpu = mx.getCurrentThreadCpuTime();
    final long end = cpu + budgetNs;
    while (cpu < end) {
      final int pick = random.nextInt(100);
      final long before = cpu;
      if (pick < 60) {
        x = workA(x);
      } else if (pick < 90) {
        x = workB(x);
      } else {
        x = workC(x);
      }
      cpu = mx.getCurrentThreadCpuTime();  // the short native call between work calls
      nativeCalls++;
      if ((++rounds & 15) == 0) {
        // Its cost on this machine now (a loaded host makes the kernel's clock read dearer).
        final long t0 = mx.getCurrentThreadCpuTime();
        final long t1 = mx.getCurrentThreadCpuTime();
        probeNs += t1 - t0;
        // The call between work calls costs more than one made right after another: reading the
        // thread's CPU clock lets the scheduler see that the time slice is over, so on a loaded
        // host the thread is often switched out at that call's return, and switching it out and
        // back in is CPU of the thread, in that call. From its clock read to the next one (t0):
        // its return, any such switch, and the next call up to its read.
        exitNs += t0 - cpu;
        probes++;
        nativeCalls += 2;
      }
      if (pick < 60) {
        a++;
        cpuA += cpu - before;
      } else if (pick < 90) {
        b++;
        cpuB += cpu - before;
      } else {
        c++;
        cpuC += cpu - before;
      }
    }
    sink += x;
    final long cpuNs = mx.getCurrentThreadCpuTime() - cpuStart;

    sleeper.interrupt();
    holder.interrupt();
    sleeper.join();
    holder.join();
    blocked.join();
    System.out.println("CPUSPLIT a=" + a + " b=" + b + " c=" + c + " cpu_a=" + cpuA + " cpu_b=" + cpuB
        + " cpu_c=" + cpuC + " native_ns="
        + (probes > 0 ? (nativeCalls - 2 * probes) * exitNs / probes + 2 * probeNs : 0)
        + " native_probe_ns=" + (probes > 0 ? probeNs / probes : 0)
        + " native_exit_ns=" + (probes > 0 ? exitNs / probes : 0)
        + " cpu_ns=" + cpuNs);
    System.out.println("IDLECPU Sleeper=" + idleCpuNs[0] + " Holder=" + idleCpuNs[1]
        + " Blocked=" + idleCpuNs[2]);
  }
}
