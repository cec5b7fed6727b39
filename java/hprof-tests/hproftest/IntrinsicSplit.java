// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/**
 * Known answer for cpu=samples where the time goes into HotSpot's intrinsics: the main thread calls
 * work methods picked at random, five of which spend most of their time in stubs the compiled code
 * calls (Math.sin/cos/log; System.arraycopy and Arrays.fill; String.indexOf and equals; CRC32;
 * AES when this JDK offers it) and one a plain integer loop. The thread's CPU clock is read before
 * and after every call, so the program knows the CPU each method took. Prints, per method, its
 * calls and CPU ("INTRINSICSPLIT trig=... cpu_trig=..."), and the main thread's CPU in all.
 * Prints "INTRINSICSPLIT STARTED" first. Args: the main thread's CPU budget in ms (default 2000).
 */
public final class IntrinsicSplit {
  static volatile long sink;

  static final double[] ANGLES = new double[1024];
  static final long[] SOURCE = new long[64 * 1024];
  static final long[] TARGET = new long[64 * 1024];
  static final String HAYSTACK;
  static final String HAYSTACK_COPY;
  static final byte[] BYTES = new byte[256 * 1024];
  static final byte[] AES_OUT = new byte[64 * 1024 + 16];
  static Cipher aes;

  static {
    SplittableRandom r = new SplittableRandom(7);
    for (int i = 0; i < ANGLES.length; i++) ANGLES[i] = 0.5 + r.nextDouble() * 100;
    for (int i = 0; i < SOURCE.length; i++) SOURCE[i] = r.nextLong();
    r.nextBytes(BYTES);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < 200_000; i++) b.append((char) ('a' + r.nextInt(20)));
    HAYSTACK = b.toString();
    HAYSTACK_COPY = new String(HAYSTACK.toCharArray());
  }

  static final String[] NAMES = {"trig", "copy", "text", "crc", "aes", "ints"};

  // Math.sin, cos and log: stubs (StubRoutines::dsin, ...) that compiled code calls without a frame
  // the stack walker knows.
  static double trig() {
    double s = 0;
    for (int k = 0; k < 12; k++) {
      for (double a : ANGLES) s += Math.sin(a) + Math.cos(a) + Math.log(a);
    }
    return s;
  }

  // System.arraycopy and Arrays.fill: the arraycopy and fill stubs.
  static long copy() {
    long s = 0;
    for (int k = 0; k < 24; k++) {
      System.arraycopy(SOURCE, 0, TARGET, 0, SOURCE.length);
      Arrays.fill(TARGET, 0, TARGET.length / 2, k);
      s += TARGET[TARGET.length - 1 - k];
    }
    return s;
  }

  // String.indexOf and String.equals: the string intrinsics.
  static long text() {
    long s = 0;
    for (int k = 0; k < 10; k++) {
      s += HAYSTACK.indexOf("zzzz" + k);
      if (HAYSTACK.equals(HAYSTACK_COPY)) s++;
    }
    return s;
  }

  // CRC32.update(byte[]): the updateBytes stub.
  static long crc() {
    CRC32 c = new CRC32();
    for (int k = 0; k < 40; k++) c.update(BYTES, 0, BYTES.length);
    return c.getValue();
  }

  // AES/ECB without padding: the AES stubs where the CPU has AES instructions.
  static long aes() throws Exception {
    long s = 0;
    for (int k = 0; k < 14; k++) {
      s += aes.doFinal(BYTES, 0, 64 * 1024, AES_OUT, 0);
    }
    return s + AES_OUT[7];
  }

  // Plain Java: no intrinsic.
  static long ints(long x) {
    for (int i = 0; i < 200_000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  public static void main(String[] args) throws Exception {
    final long budgetNs = (args.length > 0 ? Long.parseLong(args[0]) : 2000) * 1_000_000L;
    try {
      aes = Cipher.getInstance("AES/ECB/NoPadding");
      aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(Arrays.copyOf(BYTES, 16), "AES"));
    } catch (Exception none) {
      aes = null;  // no AES here: the other methods share its turns
    }
    System.out.println("INTRINSICSPLIT STARTED");
    System.out.flush();
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    final long cpuStart = mx.getCurrentThreadCpuTime();
    SplittableRandom random = new SplittableRandom(12);
    final long[] calls = new long[NAMES.length];
    final long[] cpuOf = new long[NAMES.length];
    double d = 0;
    long x = 1;
    long cpu = mx.getCurrentThreadCpuTime();
    final long end = cpu + budgetNs;
    while (cpu < end) {
      int pick = random.nextInt(NAMES.length);
      if (pick == 4 && aes == null) pick = 5;
      final long before = cpu;
      switch (pick) {
        case 0 -> d += trig();
        case 1 -> x += copy();
        case 2 -> x += text();
        case 3 -> x += crc();
        case 4 -> x += aes();
        default -> x = ints(x);
      }
      cpu = mx.getCurrentThreadCpuTime();
      calls[pick]++;
      cpuOf[pick] += cpu - before;
    }
    sink += x + (long) d;
    final long cpuNs = mx.getCurrentThreadCpuTime() - cpuStart;
    StringBuilder out = new StringBuilder("INTRINSICSPLIT");
    for (int i = 0; i < NAMES.length; i++) out.append(' ').append(NAMES[i]).append('=').append(calls[i]);
    for (int i = 0; i < NAMES.length; i++) {
      out.append(" cpu_").append(NAMES[i]).append('=').append(cpuOf[i]);
    }
    out.append(" cpu_ns=").append(cpuNs);
    System.out.println(out);
  }
}
