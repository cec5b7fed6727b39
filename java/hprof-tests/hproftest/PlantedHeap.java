// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Holds a known heap — 1500 Leaf objects in a list, a chain of 300 Node objects, 40 int[] arrays —
 * and, given a thread count, that many parked threads; prints READY and waits for one line on
 * stdin before it ends. The test compares a heap dump taken meanwhile with the JVM's own class
 * histogram.
 */
public final class PlantedHeap {
  static final class Leaf {
    final int value;

    Leaf(int value) {
      this.value = value;
    }
  }

  static final class Node {
    Node next;
    final long payload;

    Node(Node next, long payload) {
      this.next = next;
      this.payload = payload;
    }
  }

  static final List<Leaf> LEAVES = new ArrayList<>();
  static Node chain;
  static final int[][] ARRAYS = new int[40][];

  public static void main(String[] args) throws Exception {
    final int threads = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    for (int i = 0; i < 1500; i++) LEAVES.add(new Leaf(i));
    for (int i = 0; i < 300; i++) chain = new Node(chain, i);
    for (int i = 0; i < ARRAYS.length; i++) ARRAYS[i] = new int[i + 1];
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch started = new CountDownLatch(threads);
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        started.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "parked-" + i);
      t.setDaemon(true);
      t.start();
    }
    started.await();
    // Nothing after READY may grow the heap by more than a few objects (no string concatenation,
    // which would bootstrap java.lang.invoke): the dump must see the heap jcmd saw.
    BufferedReader input = new BufferedReader(new InputStreamReader(System.in));
    System.out.println("READY");
    System.out.flush();
    String line = input.readLine();
    System.out.print("GOT ");
    System.out.println(line);
  }
}
