// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

/**
 * Does some work (allocation, CPU, a contended-free monitor), prints READY, and then waits for one
 * line on stdin before it ends: the test can signal it or command the agent while it runs.
 */
public final class Blocker {
  static final List<Object> KEEP = new ArrayList<>();

  static long spin() {
    long x = 0;
    for (int i = 0; i < 20_000_000; i++) x += i ^ (x >>> 3);
    return x;
  }

  public static void main(String[] args) throws Exception {
    for (int i = 0; i < 3000; i++) KEEP.add(new char[i % 32]);
    System.out.println("SPIN " + (spin() != 1));
    System.out.println("READY");
    System.out.flush();
    String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
    System.out.println("GOT " + line);
  }
}
