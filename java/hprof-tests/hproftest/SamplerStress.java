// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.Deflater;

/**
 * Robustness of the CPU-time sampler, in one short run: a stack thousands of frames deep, a thread
 * in native code (zlib), a thread starting and ending every millisecond, classes being unloaded,
 * and System.exit while threads still burn CPU (samples in flight). Prints "STRESS DONE" last.
 */
public final class SamplerStress {
  static volatile long sink;

  static long burn(long nanos) {
    final long end = System.nanoTime() + nanos;
    long x = 1;
    while (System.nanoTime() < end) {
      for (int i = 0; i < 10_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    }
    return x;
  }

  static long deepBurn(int depth) {
    return depth == 0 ? burn(300_000_000L) : deepBurn(depth - 1) + 1;
  }

  static void deflateFor(long nanos) {
    byte[] input = new byte[1 << 20];
    new Random(3).nextBytes(input);
    byte[] output = new byte[input.length + 1024];
    final long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Deflater d = new Deflater(9);
      d.setInput(input);
      d.finish();
      while (!d.finished()) sink += d.deflate(output);
      d.end();
    }
  }

  /**
   * A class loaded by a loader of its own, so it can be unloaded. It is then in another runtime
   * package than SamplerStress, so it uses nothing of it.
   */
  public static final class Payload implements Runnable {
    public static volatile long result;

    @Override
    public void run() {
      final long end = System.nanoTime() + 2_000_000L;
      long x = 1;
      while (System.nanoTime() < end) {
        for (int i = 0; i < 10_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
      }
      result = x;
    }
  }

  static final class OneClassLoader extends ClassLoader {
    OneClassLoader() {
      super(SamplerStress.class.getClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.equals(Payload.class.getName())) return super.loadClass(name, resolve);
      try (InputStream in = SamplerStress.class.getResourceAsStream("SamplerStress$Payload.class")) {
        byte[] bytes = in.readAllBytes();
        return defineClass(name, bytes, 0, bytes.length);
      } catch (java.io.IOException e) {
        throw new ClassNotFoundException(name, e);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Thread nativeThread = new Thread(() -> deflateFor(600_000_000L), "Native");
    nativeThread.start();

    sink += deepBurn(3000);

    // Short-lived threads, one per millisecond for half a second.
    List<Thread> churn = new ArrayList<>();
    final long churnEnd = System.nanoTime() + 500_000_000L;
    while (System.nanoTime() < churnEnd) {
      Thread t = new Thread(() -> sink += burn(200_000L), "Churn");
      t.start();
      churn.add(t);
      Thread.sleep(1);
    }
    for (Thread t : churn) t.join();

    // Classes defined, run, dropped and collected.
    for (int i = 0; i < 20; i++) {
      Class<?> c = new OneClassLoader().loadClass(Payload.class.getName());
      ((Runnable) c.getDeclaredConstructor().newInstance()).run();
    }
    for (int i = 0; i < 3; i++) System.gc();
    nativeThread.join();

    // Exit with CPU-bound threads running: their timers fire until the VM stops them.
    for (int i = 0; i < 2; i++) {
      Thread t = new Thread(() -> sink += burn(60_000_000_000L), "Burner" + i);
      t.setDaemon(true);
      t.start();
    }
    Thread.sleep(100);
    System.out.println("STRESS DONE churn=" + churn.size());
    System.exit(0);
  }
}
