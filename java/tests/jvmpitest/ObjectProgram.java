// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Object events and dumps: a thread allocates 100 Tracked objects (and two arrays); the agent
 * dumps one of them, dumps the heap and the monitors (while one thread owns a lock another waits
 * for), JNI code makes global references to it, and finally all of them die and must be freed.
 */
public class ObjectProgram {
  static final class Tracked {
    int a = 0x01020304;
    long b = 0x1122334455667788L;
    Object ref;

    Tracked(Object ref) {
      this.ref = ref;
    }
  }

  static final int COUNT = 100;
  static List<Tracked> live;
  static Object[] arrays;

  static native long[] globalRefs(Object o);

  public static void main(String[] args) throws Exception {
    System.load(System.getProperty("jvmpitest.native"));
    Object shared = new Object();
    Agent.hook(9, 1, shared);
    Thread allocator =
        new Thread("jvmpitest-allocator") {
          @Override
          public void run() {
            List<Tracked> list = new ArrayList<>(COUNT);
            for (int i = 0; i < COUNT; i++) list.add(new Tracked(shared));
            arrays = new Object[] {new long[777], new Tracked[5]};
            live = list;
          }
        };
    allocator.start();
    allocator.join();
    Facts.fact("FACT", "allocated", live.size());

    Tracked probe = live.get(0);
    Agent.hook(1, 0, probe);
    Agent.hook(2, 0, null);

    Object lock = new Object();
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread owner =
        new Thread("jvmpitest-owner") {
          @Override
          public void run() {
            synchronized (lock) {
              held.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                throw new RuntimeException(e);
              }
            }
          }
        };
    Thread blocked =
        new Thread("jvmpitest-blocked") {
          @Override
          public void run() {
            synchronized (lock) {
              lock.hashCode();
            }
          }
        };
    owner.start();
    held.await();
    blocked.start();
    Facts.awaitState(blocked, Thread.State.BLOCKED);
    Agent.hook(3, 0, lock);
    release.countDown();
    owner.join();
    blocked.join();

    long[] refs = globalRefs(probe);
    Facts.fact(
        "REFS", "global", "0x" + Long.toHexString(refs[0]), "weak", "0x" + Long.toHexString(refs[1]));

    WeakReference<Tracked> weak = new WeakReference<>(probe);
    probe = null;
    live = null;
    for (int i = 0; i < 100 && weak.get() != null; i++) System.gc();
    boolean all =
        Facts.await(
            () -> {
              if (Agent.hook(4, 0, null) >= COUNT) return true;
              System.gc();
              return false;
            },
            20_000);
    Facts.fact("FACT", "collected", weak.get() == null, "freed_all", all);
    if (all) Agent.hook(5, 0, null);
  }
}
