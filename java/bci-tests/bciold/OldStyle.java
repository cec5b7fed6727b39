// SPDX-License-Identifier: Apache-2.0
package bciold;

/**
 * Rewritten by the bci tests into a version 49 class file (no StackMapTable, checked by the old
 * inferencing verifier); jsrDemo's body is replaced with hand-written jsr/ret code. So: no
 * invokedynamic (no string concatenation, no lambdas) and no private access between classes.
 */
public class OldStyle {
  static int counter;

  static class Base {
    int value;

    Base(int value) {
      if (value < 0) throw new IllegalArgumentException();
      this.value = value;
    }
  }

  static class Derived extends Base {
    Derived(int value) {
      super(check(value));
    }

    static int check(int value) {
      if (value == 99) throw new IllegalStateException();
      return value;
    }
  }

  /** Replaced: x >= 0 ? 2 * x : -1, each path calling a subroutine with jsr. */
  static int jsrDemo(int x) {
    return 0;
  }

  static int recurse(int n) {
    if (n == 0) throw new UnsupportedOperationException();
    try {
      return recurse(n - 1);
    } finally {
      counter++;
    }
  }

  static int choose(int k) {
    switch (k) {
      case 1: return 10;
      case 2: return 20;
      case 3: return 30;
      case 1000: return 40;
      default: return -1;
    }
  }

  /** Synchronized methods of an old class file: the class's monitor, `this`, an exception. */
  static synchronized int syncedStatic(int v) {
    return v + 1;
  }

  synchronized int syncedThrows(int v) {
    if (v > 0) throw new IllegalStateException();
    return v;
  }

  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    out.append(jsrDemo(5)).append(' ').append(jsrDemo(-3)).append('\n');
    for (int v = -1; v <= 99; v += 50) {
      try {
        out.append(new Derived(v).value).append('\n');
      } catch (RuntimeException e) {
        out.append(e.getClass().getName()).append('\n');
      }
    }
    try {
      recurse(2);
    } catch (UnsupportedOperationException e) {
      out.append("counter ").append(counter).append('\n');
    }
    int sum = 0;
    for (int k = 0; k < 4; k++) sum += choose(k);
    out.append(sum + choose(1000)).append('\n');
    counter = syncedStatic(counter);
    try {
      new OldStyle().syncedThrows(1);
    } catch (IllegalStateException expected) {
      counter++;
    }
    int[][] grid = new int[2][2];
    out.append(grid.length).append('\n');
    System.out.print(out);
  }
}
