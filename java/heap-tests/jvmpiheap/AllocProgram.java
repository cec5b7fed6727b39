// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

import java.lang.ref.WeakReference;
import java.util.concurrent.CountDownLatch;

/**
 * Allocation accounting. Allocates known numbers of known objects and arrays while the allocation
 * agent counts this thread's allocations under a label ("main-flat", "main-multi", and "worker"
 * on a second thread), drops every third object of each kind, collects until a WeakReference to
 * each dropped object is cleared, waits until the agent has seen their OBJECT_FREE events, and keeps
 * the rest until exit.
 *
 * <p>Prints one line per kind: {@code EXPECT <label> <class name> <total> <live> <array length or
 * -1> <payload bytes>}, then FACT lines.
 */
public final class AllocProgram {
  static final class Item {
    int a;
    long b;

    Item(int a) {
      this.a = a;
      this.b = a;
    }
  }

  static final class Blob {
    double x;
    byte y;
    Object ref;
  }

  static final class Empty {}

  static final int ITEMS = 1500, BLOBS = 700, EMPTIES = 300, PRIMS = 300, ITEM_ARRAYS = 200;
  static final int INT2D = 40, ITEM2D = 30, LONG3D = 10, WORKER_BLOBS = 400;

  static Object[] keptFlat, keptMulti, keptWorker;
  static WeakReference<?>[] weak = new WeakReference<?>[8192];
  static int weakCount;

  static void allocFlat(Object[] into, boolean counted) {
    if (counted) AllocAgent.begin("main-flat");
    int k = 0;
    for (int i = 0; i < ITEMS; i++) into[k++] = new Item(i);
    for (int i = 0; i < BLOBS; i++) into[k++] = new Blob();
    for (int i = 0; i < EMPTIES; i++) into[k++] = new Empty();
    for (int i = 0; i < PRIMS; i++) into[k++] = new int[17];
    for (int i = 0; i < PRIMS; i++) into[k++] = new long[9];
    for (int i = 0; i < PRIMS; i++) into[k++] = new byte[33];
    for (int i = 0; i < PRIMS; i++) into[k++] = new double[5];
    for (int i = 0; i < PRIMS; i++) into[k++] = new boolean[21];
    for (int i = 0; i < PRIMS; i++) into[k++] = new char[13];
    for (int i = 0; i < PRIMS; i++) into[k++] = new short[11];
    for (int i = 0; i < PRIMS; i++) into[k++] = new float[7];
    for (int i = 0; i < ITEM_ARRAYS; i++) into[k++] = new Item[5];
    if (counted) AllocAgent.end();
  }

  static void allocMulti(Object[] into, boolean counted) {
    if (counted) AllocAgent.begin("main-multi");
    int k = 0;
    for (int i = 0; i < INT2D; i++) into[k++] = new int[6][7];
    for (int i = 0; i < ITEM2D; i++) into[k++] = new Item[4][3];
    for (int i = 0; i < LONG3D; i++) into[k++] = new long[2][3][4];
    if (counted) AllocAgent.end();
  }

  static void allocWorker(Object[] into, boolean counted) {
    if (counted) AllocAgent.begin("worker");
    for (int i = 0; i < WORKER_BLOBS; i++) into[i] = new Blob();
    if (counted) AllocAgent.end();
  }

  static int dropped(int n) {
    return (n + 2) / 3; // indexes 0, 3, 6, ...
  }

  static void expect(String label, String name, int total, int live, int length, int payload) {
    System.out.println(
        "EXPECT " + label + " " + name + " " + total + " " + live + " " + length + " " + payload);
  }

  static void expectRange(String label, String name, int total, int length, int payload) {
    expect(label, name, total, total - dropped(total), length, payload);
  }

  /** Weakly references o (and, for arrays of arrays, everything below it). */
  static void watch(Object o) {
    weak[weakCount++] = new WeakReference<>(o);
    if (o instanceof Object[] && !(o instanceof Item[])) {
      for (Object e : (Object[]) o) watch(e);
    }
  }

  /** Drops every third element of each run of `count` slots from `start`. */
  static void dropRuns(Object[] a, int start, int count) {
    for (int i = 0; i < count; i += 3) {
      watch(a[start + i]);
      a[start + i] = null;
    }
  }

  static boolean allCleared() {
    for (int i = 0; i < weakCount; i++) {
      if (weak[i].get() != null) return false;
    }
    return true;
  }

  public static void main(String[] args) throws Exception {
    AllocAgent.load();
    AllocAgent.end(); // links the native now: linking runs Java code that allocates
    final int flatTotal = ITEMS + BLOBS + EMPTIES + 8 * PRIMS + ITEM_ARRAYS;
    final int multiTotal = INT2D + ITEM2D + LONG3D;

    // Warm-up: load, link and resolve everything the counted code touches, uncounted.
    allocFlat(new Object[flatTotal], false);
    allocMulti(new Object[multiTotal], false);
    allocWorker(new Object[WORKER_BLOBS], false);

    keptFlat = new Object[flatTotal];
    keptMulti = new Object[multiTotal];
    keptWorker = new Object[WORKER_BLOBS];
    CountDownLatch workerDone = new CountDownLatch(1);
    Thread worker =
        new Thread(
            () -> {
              allocWorker(keptWorker, true);
              workerDone.countDown();
            },
            "alloc-worker");

    allocFlat(keptFlat, true);
    allocMulti(keptMulti, true);
    worker.start();
    workerDone.await();
    worker.join();

    // Drop every third object of each kind.
    int at = 0;
    for (int n : new int[] {ITEMS, BLOBS, EMPTIES, PRIMS, PRIMS, PRIMS, PRIMS, PRIMS, PRIMS, PRIMS,
        PRIMS, ITEM_ARRAYS}) {
      dropRuns(keptFlat, at, n);
      at += n;
    }
    dropRuns(keptMulti, 0, INT2D);
    dropRuns(keptMulti, INT2D, ITEM2D);
    dropRuns(keptMulti, INT2D + ITEM2D, LONG3D);
    dropRuns(keptWorker, 0, WORKER_BLOBS);

    int rounds = 0;
    while (!allCleared() && rounds < 100) {
      System.gc();
      rounds++;
    }
    Facts.fact("gc_rounds", rounds);
    Facts.fact("all_cleared", allCleared());
    Facts.fact("dropped_objects", weakCount);
    long freed = AllocAgent.awaitFreed(weakCount, 5000);
    Facts.fact("freed_seen", freed);
    AllocAgent.report(System.getProperty("jvmpiheap.out") + "/checkpoint.txt");

    String item = Item.class.getName();
    expectRange("main-flat", item, ITEMS, -1, 12);
    expectRange("main-flat", Blob.class.getName(), BLOBS, -1, 13);
    expectRange("main-flat", Empty.class.getName(), EMPTIES, -1, 0);
    expectRange("main-flat", "[I", PRIMS, 17, 4);
    expectRange("main-flat", "[J", PRIMS, 9, 8);
    expectRange("main-flat", "[B", PRIMS, 33, 1);
    expectRange("main-flat", "[D", PRIMS, 5, 8);
    expectRange("main-flat", "[Z", PRIMS, 21, 1);
    expectRange("main-flat", "[C", PRIMS, 13, 2);
    expectRange("main-flat", "[S", PRIMS, 11, 2);
    expectRange("main-flat", "[F", PRIMS, 7, 4);
    expectRange("main-flat", "[L" + item + ";", ITEM_ARRAYS, 5, 4);
    // Arrays of arrays: the outer array and every row die together.
    int d = dropped(INT2D);
    expect("main-multi", "[[I", INT2D, INT2D - d, 6, 4);
    expect("main-multi", "[I", INT2D * 6, (INT2D - d) * 6, 7, 4);
    d = dropped(ITEM2D);
    expect("main-multi", "[[L" + item + ";", ITEM2D, ITEM2D - d, 4, 4);
    expect("main-multi", "[L" + item + ";", ITEM2D * 4, (ITEM2D - d) * 4, 3, 4);
    d = dropped(LONG3D);
    expect("main-multi", "[[[J", LONG3D, LONG3D - d, 2, 4);
    expect("main-multi", "[[J", LONG3D * 2, (LONG3D - d) * 2, 3, 4);
    expect("main-multi", "[J", LONG3D * 6, (LONG3D - d) * 6, 4, 8);
    expectRange("worker", Blob.class.getName(), WORKER_BLOBS, -1, 13);
    System.out.flush();
    // The kept objects stay reachable until the VM is gone.
    if (keptFlat.length + keptMulti.length + keptWorker.length == 0) System.out.println();
  }
}
