// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.ArrayList;
import java.util.List;

/** The smallest program the option tests run: allocates a little, computes a little, says RAN. */
public final class Trivial {
  static final List<Object> KEEP = new ArrayList<>();

  public static void main(String[] args) {
    long sum = 0;
    for (int i = 0; i < 2000; i++) {
      KEEP.add(new int[i % 16]);
      sum += Integer.toString(i).hashCode();
    }
    System.out.println("RAN " + KEEP.size() + " " + (sum != 42));
  }
}
