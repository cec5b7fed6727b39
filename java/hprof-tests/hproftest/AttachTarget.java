// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A program started without any agent, for profilers attached to it while it runs. It does what
 * each line on stdin asks and answers with one line on stdout, which holds the known answer:
 * <ul>
 *   <li>{@code cpu MS}: the calling thread spends MS ms of its CPU in workA or workB, picked at
 *       random 75/25; prints {@code CPU a= b= cpu_a= cpu_b=} (the CPU each method took, read from
 *       the thread's clock around every call);
 *   <li>{@code alloc N}: allocates N objects of {@link Planted} at one site, kept alive; prints
 *       {@code ALLOC n=N};
 *   <li>{@code calls N}: calls {@link #counted} N times; prints {@code CALLS n=N};
 *   <li>{@code garbage MIB}: allocates MIB MiB of short-lived 1 KiB arrays; prints
 *       {@code GARBAGE mib=MIB};
 *   <li>{@code round}: a fixed computation whose printed result must never change, profiled or
 *       not ({@code ROUND k value=...});
 *   <li>{@code nan}: uses {@link NaNHolder} (loading it the first time), a class with a NaN
 *       constant; prints {@code NAN true};
 *   <li>{@code quit}: prints {@code BYE} and ends.
 * </ul>
 * Before it reads stdin it allocates {@code EARLY} objects of {@link Early}, kept alive, and
 * starts a thread that ran before any attach ("Spinner", parked), then prints {@code READY}.
 */
public final class AttachTarget {
  static final int WORK = 150_000;  // one call: ~200-400 us
  static final int EARLY = 5000;
  static volatile long sink;
  static final List<Object> KEPT = new ArrayList<>();

  /** A class whose constant pool holds a Double NaN (the compiler inlines Double.NaN). */
  static final class NaNHolder {
    static double orNaN(double x) {
      return x < 0 ? Double.NaN : x;
    }
  }

  /** Objects allocated before any profiler was attached. */
  static final class Early {
    final long value;

    Early(long value) {
      this.value = value;
    }
  }

  /** Objects allocated by {@code alloc}, at one site. */
  static final class Planted {
    final long value;

    Planted(long value) {
      this.value = value;
    }
  }

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

  static long counted(long x) {
    return x * 31 + 7;
  }

  static String cpu(long budgetMs) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    SplittableRandom random = new SplittableRandom(7);
    long a = 0, b = 0, cpuA = 0, cpuB = 0, x = 1;
    long cpu = mx.getCurrentThreadCpuTime();
    final long end = cpu + budgetMs * 1_000_000L;
    while (cpu < end) {
      final boolean pickA = random.nextInt(100) < 75;
      final long before = cpu;
      x = pickA ? workA(x) : workB(x);
      cpu = mx.getCurrentThreadCpuTime();
      if (pickA) {
        a++;
        cpuA += cpu - before;
      } else {
        b++;
        cpuB += cpu - before;
      }
    }
    sink += x;
    return "CPU a=" + a + " b=" + b + " cpu_a=" + cpuA + " cpu_b=" + cpuB;
  }

  static String alloc(int n) {
    for (int i = 0; i < n; i++) {
      KEPT.add(new Planted(i));
    }
    return "ALLOC n=" + n;
  }

  static String garbage(int mib) {
    long sum = 0;
    for (int i = 0; i < mib * 1024; i++) {
      sum += new byte[1024].length;
    }
    sink += sum;
    return "GARBAGE mib=" + mib;
  }

  static String calls(int n) {
    long x = 0;
    for (int i = 0; i < n; i++) {
      x = counted(x);
    }
    sink += x;
    return "CALLS n=" + n;
  }

  static String round(int k) {
    long x = k;
    for (int i = 0; i < 100_000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    return "ROUND " + k + " value=" + Long.toHexString(x);
  }

  public static void main(String[] args) throws Exception {
    for (int i = 0; i < EARLY; i++) {
      KEPT.add(new Early(i));
    }
    Thread spinner = new Thread(() -> {
      synchronized (KEPT) {
        try {
          KEPT.wait();
        } catch (InterruptedException done) {
          // ended by quit
        }
      }
    }, "Spinner");
    spinner.setDaemon(true);
    spinner.start();
    System.out.println("READY");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    int rounds = 0;
    for (String line; (line = in.readLine()) != null; ) {
      final String[] words = line.trim().split("\\s+");
      final String answer;
      switch (words[0]) {
        case "cpu":
          answer = cpu(Long.parseLong(words[1]));
          break;
        case "alloc":
          answer = alloc(Integer.parseInt(words[1]));
          break;
        case "garbage":
          answer = garbage(Integer.parseInt(words[1]));
          break;
        case "calls":
          answer = calls(Integer.parseInt(words[1]));
          break;
        case "round":
          answer = round(++rounds);
          break;
        case "nan":
          answer = "NAN " + Double.isNaN(NaNHolder.orNaN(-1));
          break;
        case "quit":
          System.out.println("BYE");
          return;
        default:
          answer = "UNKNOWN " + line;
      }
      System.out.println(answer);
    }
  }
}
