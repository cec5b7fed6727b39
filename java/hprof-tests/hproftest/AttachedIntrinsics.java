// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.SplittableRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/**
 * A program started without any agent, for a CPU sampler attached while it runs: a thread named
 * "Intrinsics", started before anything can attach, calls the work methods of {@link
 * IntrinsicSplit} (five that spend most of their time in HotSpot's intrinsic stubs, one plain
 * integer loop) picked at random, until stdin says {@code quit}. Prints {@code RUNNING} once the
 * thread runs, and {@code DONE calls=N} at the end.
 */
public final class AttachedIntrinsics {
  static volatile boolean stop;
  static volatile long sink;

  public static void main(String[] args) throws Exception {
    try {
      IntrinsicSplit.aes = Cipher.getInstance("AES/ECB/NoPadding");
      IntrinsicSplit.aes.init(Cipher.ENCRYPT_MODE,
          new SecretKeySpec(Arrays.copyOf(IntrinsicSplit.BYTES, 16), "AES"));
    } catch (Exception none) {
      IntrinsicSplit.aes = null;  // no AES here: the other methods share its turns
    }
    final long[] calls = new long[1];
    Thread worker = new Thread(() -> {
      // Printed by the worker itself: by then the VM has given the thread its name in /proc,
      // where the test looks for it (Thread.start() returns before that).
      System.out.println("RUNNING");
      System.out.flush();
      SplittableRandom random = new SplittableRandom(12);
      double d = 0;
      long x = 1;
      try {
        while (!stop) {
          int pick = random.nextInt(IntrinsicSplit.NAMES.length);
          if (pick == 4 && IntrinsicSplit.aes == null) pick = 5;
          switch (pick) {
            case 0 -> d += IntrinsicSplit.trig();
            case 1 -> x += IntrinsicSplit.copy();
            case 2 -> x += IntrinsicSplit.text();
            case 3 -> x += IntrinsicSplit.crc();
            case 4 -> x += IntrinsicSplit.aes();
            default -> x = IntrinsicSplit.ints(x);
          }
          calls[0]++;
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      sink += x + (long) d;
    }, "Intrinsics");
    worker.start();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.trim().equals("quit")) break;
    }
    stop = true;
    worker.join();
    System.out.println("DONE calls=" + calls[0]);
  }
}
