// SPDX-License-Identifier: Apache-2.0
package hproftest;

/**
 * A call tree known in advance, for cpu=times: tree() runs once and calls a() 3 times; a() calls
 * b() twice and c() once; b() calls c() once. thrower() is called 4 times through e() and leaves
 * each time by an exception thrown two frames down, in deeper(). Calls per method: tree 1, a 3,
 * b 6, c 9, e 4, thrower 4, deeper 4.
 */
public final class CallTree {
  static int sink;

  static void c() {
    sink++;
  }

  static void b() {
    c();
  }

  static void a() {
    b();
    b();
    c();
  }

  static void tree() {
    for (int i = 0; i < 3; i++) a();
  }

  static void deeper() {
    throw new IllegalStateException("expected");
  }

  static void thrower() {
    deeper();
  }

  static void e() {
    try {
      thrower();
    } catch (IllegalStateException expected) {
      sink--;
    }
  }

  public static void main(String[] args) {
    tree();
    for (int i = 0; i < 4; i++) e();
    System.out.println("CALLTREE DONE " + sink);
  }
}
