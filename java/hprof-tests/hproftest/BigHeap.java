// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * Holds a large heap: the given number of MiB in long[16384] arrays (128 KiB each) and 100,000
 * small objects; prints READY and waits for one line on stdin before it ends. For the test that a
 * heap dump does not need memory in proportion to the heap.
 */
public final class BigHeap {
  static final class Small {
    final int value;
    Small next;

    Small(int value, Small next) {
      this.value = value;
      this.next = next;
    }
  }

  static long[][] arrays;
  static Small smalls;

  public static void main(String[] args) throws Exception {
    final int mib = args.length > 0 ? Integer.parseInt(args[0]) : 512;
    arrays = new long[mib * 8][];
    for (int i = 0; i < arrays.length; i++) {
      arrays[i] = new long[16384];
      arrays[i][i & 16383] = i;
    }
    for (int i = 0; i < 100_000; i++) smalls = new Small(i, smalls);
    System.gc();
    System.out.println("READY");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in)).readLine();
  }
}
