// SPDX-License-Identifier: Apache-2.0
package jvmproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

/**
 * Known answer for the live front end: thread "Burner" spends its time in hotLoop() until stdin
 * closes; 5000 PlantedNode objects stay reachable; 50 equal strings "jvmprof-duplicate", each with
 * its own array (built at run time, so no literal of that value exists), stay reachable for the
 * duplicate-strings view; a thread with markup in its name tests that the UI shows names as text.
 * Prints READY once everything is in place.
 */
public final class LiveHog {
  static volatile long sink;
  static volatile boolean stop;
  static final List<Object> KEEP = new ArrayList<>();

  static final class PlantedNode {
    final int id;

    PlantedNode(int id) {
      this.id = id;
    }
  }

  /** CPU-bound and call-free: the top frame of nearly every sample of the Burner thread. */
  static long hotLoop() {
    long x = 1;
    for (int i = 0; i < 5_000_000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      x ^= (x >>> 17);
    }
    return x;
  }

  public static void main(String[] args) throws Exception {
    for (int i = 0; i < 5000; i++) KEEP.add(new PlantedNode(i));
    for (int i = 0; i < 50; i++) KEEP.add(new StringBuilder("jvmprof-dup").append("licate").toString());
    Thread burner = new Thread(() -> {
      while (!stop) sink += hotLoop();
    }, "Burner");
    burner.setDaemon(true);
    burner.start();
    Thread marked = new Thread(() -> {}, "<img src=x onerror=window.__jvmprofXss=1>");
    marked.start();
    marked.join();
    System.out.println("READY");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in)).readLine();
    stop = true;
    burner.join();
    System.out.println("DONE " + KEEP.size());
  }
}
