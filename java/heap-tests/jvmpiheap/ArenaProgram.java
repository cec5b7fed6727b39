// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/** Allocates and collects enough for objects to move between the collector's spaces. */
public final class ArenaProgram {
  static Object[] kept = new Object[20_000];

  public static void main(String[] args) {
    for (int round = 0; round < 5; round++) {
      for (int i = 0; i < kept.length; i++) {
        if (i % 2 == round % 2) kept[i] = new int[8 + (i % 16)];
      }
      System.gc();
    }
    System.out.println("FACT rounds=5");
  }
}
