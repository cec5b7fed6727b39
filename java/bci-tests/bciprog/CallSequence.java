// SPDX-License-Identifier: Apache-2.0
package bciprog;

import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

/**
 * A program with a known call sequence for the behavioural tests: recursion, exceptions thrown
 * through several frames, synchronized code, constructors (including exceptions before, in and
 * after the super() call), lambdas, inner classes and switch-heavy methods. Its output must be the
 * same with and without instrumentation.
 */
public class CallSequence {
  static int counter;

  static {
    counter = 1;
  }

  private int total;

  enum Color { RED, GREEN, BLUE }

  static class Base {
    final int value;

    Base(int value) {
      if (value < 0) throw new IllegalArgumentException("negative " + value);
      this.value = value;
    }
  }

  static class Derived extends Base {
    final int extra;

    Derived(int value) {
      this(value, 10);
    }

    Derived(int value, int extra) {
      super(checked(value));
      if (extra == 13) throw new IllegalStateException("unlucky");
      this.extra = extra;
    }

    static int checked(int value) {
      if (value == 99) throw new UnsupportedOperationException("99");
      return value;
    }
  }

  class Inner {
    int get() {
      return total + 1;
    }
  }

  interface Shape {
    double area();

    default String describe() {
      return "area " + Math.round(area());
    }
  }

  static int factorial(int n) {
    return n <= 1 ? 1 : n * factorial(n - 1);
  }

  static void thrower(int depth) {
    if (depth == 0) throw new IllegalStateException("bottom");
    thrower(depth - 1);
  }

  static int catcher() {
    try {
      thrower(2);
      return 0;
    } catch (IllegalStateException e) {
      return 1;
    } finally {
      counter++;
    }
  }

  static int finallyRethrow() {
    try {
      thrower(1);
      return 0;
    } finally {
      counter += 10;
    }
  }

  synchronized void syncAdd(int v) {
    total += v;
  }

  static synchronized int syncStatic(int v) {
    return v + 1;
  }

  int syncBlock(Object lock) {
    synchronized (lock) {
      total++;
      if (total > 1000) throw new IllegalStateException();
    }
    return total;
  }

  static int syncThrows(Object lock) {
    synchronized (lock) {
      thrower(0);
    }
    return 0;
  }

  static int tableSwitch(int k) {
    switch (k) {
      case 0:
        return 10;
      case 1:
        return 11;
      case 2:
      case 3:
        return 12;
      case 5:
        return 15;
      default:
        return -1;
    }
  }

  static int lookupSwitch(int k) {
    switch (k) {
      case -1000:
        return 1;
      case 7:
        return 2;
      case 100000:
        return 3;
      default:
        return 0;
    }
  }

  static int stringSwitch(String s) {
    switch (s) {
      case "alpha":
        return 1;
      case "beta":
        return 2;
      case "Aa":
      case "BB":  // same hashCode as "Aa"
        return 3;
      default:
        return 0;
    }
  }

  static int enumSwitch(Color c) {
    return switch (c) {
      case RED -> 1;
      case GREEN -> {
        int x = factorial(3);
        yield x;
      }
      default -> 3;
    };
  }

  static int loops(int n) {
    int sum = 0;
    long product = 1;
    double half = 0.5;
    for (int i = 0; i < n; i++) {
      if ((i & 1) == 0) {
        sum += i;
      } else if (i % 3 == 0) {
        product *= i;
      } else {
        half += i;
      }
      Object o = i > 2 ? "s" : null;
      if (o == null) sum--;
    }
    return sum + (int) product + (int) half;
  }

  static int arrays() {
    int[] a = new int[3];
    String[] s = new String[2];
    int[][] m = new int[2][3];
    long[][][] partial = new long[2][][];
    a[0] = m.length + s.length + partial.length;
    return a[0] + m[1].length;
  }

  String run() {
    syncAdd(5);
    Inner inner = new Inner();
    Supplier<String> viaThis = () -> "total=" + total + " inner=" + inner.get();
    return viaThis.get();
  }

  static String constructors() {
    StringBuilder out = new StringBuilder();
    out.append(new Derived(4).extra);
    for (int v : new int[] {-1, 13, 99}) {
      try {
        Derived d = v == 13 ? new Derived(1, v) : new Derived(v);
        out.append(d.value);
      } catch (RuntimeException e) {
        out.append(' ').append(e.getClass().getSimpleName());
      }
    }
    return out.toString();
  }

  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    out.append("fact=").append(factorial(4)).append('\n');
    try {
      thrower(3);
    } catch (IllegalStateException e) {
      out.append("caught ").append(e.getMessage()).append('\n');
    }
    out.append("catcher=").append(catcher()).append('\n');
    try {
      finallyRethrow();
    } catch (IllegalStateException e) {
      out.append("rethrown counter=").append(counter).append('\n');
    }
    CallSequence cs = new CallSequence();
    out.append("sync=").append(syncStatic(1)).append(' ').append(cs.syncBlock(cs)).append('\n');
    try {
      syncThrows(cs);
    } catch (IllegalStateException e) {
      out.append("syncThrows\n");
    }
    out.append(cs.run()).append('\n');
    out.append("ctors=").append(constructors()).append('\n');
    IntUnaryOperator twice = x -> x * 2;
    IntUnaryOperator fact = CallSequence::factorial;
    out.append("lambda=").append(twice.applyAsInt(fact.applyAsInt(3))).append('\n');
    Shape square = () -> 4.0;
    out.append(square.describe()).append('\n');
    int switches = 0;
    for (int k = -1; k <= 6; k++) switches = switches * 3 + tableSwitch(k);
    for (int k : new int[] {-1000, 7, 8, 100000}) switches += lookupSwitch(k);
    for (String s : new String[] {"alpha", "beta", "Aa", "BB", "zeta"}) switches += stringSwitch(s);
    for (Color c : Color.values()) switches += enumSwitch(c);
    out.append("switches=").append(switches).append('\n');
    out.append("loops=").append(loops(12)).append(" arrays=").append(arrays()).append('\n');
    out.append("medium=").append(BigMethods.medium(3)).append('\n');
    out.append("big=").append(BigMethods.big(2)).append('\n');
    System.out.print(out);
  }
}
