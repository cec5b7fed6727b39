// SPDX-License-Identifier: Apache-2.0
package hproftest;

/**
 * Known allocation volumes for sampled heap=sites: about 20-30 MB each of three kinds (small
 * objects, larger objects, 1000-byte arrays) and a little of a fourth, all garbage at once. The
 * same run under exact heap=sites gives the true bytes per class.
 */
public final class AllocKnown {
  static final class Small {
    int a;
  }

  static final class Large {
    long a, b, c, d, e, f;
  }

  static final class Rare {
    long a;
  }

  static volatile Object sink;

  public static void main(String[] args) {
    for (int i = 0; i < 1_500_000; i++) {
      Small s = new Small();
      s.a = i;
      sink = s;
    }
    for (int i = 0; i < 500_000; i++) {
      Large l = new Large();
      l.a = i;
      sink = l;
    }
    for (int i = 0; i < 25_000; i++) sink = new byte[1000];
    for (int i = 0; i < 1000; i++) sink = new Rare();
    System.out.println("ALLOCKNOWN DONE");
  }
}
