// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

import java.lang.ref.WeakReference;

/**
 * RequestEvent(OBJECT_ALLOC / OBJECT_DUMP) by ID at several points: right after allocation, after
 * collections that compact the heap (the objects move; their IDs must not), and after objects
 * allocated since. IDs come from the OBJECT_ALLOC event of each allocation (alloc_id) and from
 * jobject2jobjectID (named_id). An object that was collected must not resolve at all.
 *
 * <p>FACT lines: &lt;object&gt;.alloc_id, .named_id, .event_size, and per point
 * &lt;object&gt;.&lt;point&gt;.&lt;key&gt; for each word of ResolveAgent.request.
 */
public final class ResolveProgram {
  static final class Small {
    int a = 1;
    int b = 2;
  }

  static final class Big {
    long f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19;
  }

  static Object small, big, ints, strings, late;
  static final long[] ALLOC_IDS = new long[5];
  static Object[] garbage;

  static void churn() {
    // Garbage around the survivors, then full collections: the survivors are compacted.
    garbage = new Object[20000];
    for (int i = 0; i < garbage.length; i++) garbage[i] = new byte[64 + (i & 255)];
    garbage = null;
    System.gc();
    System.gc();
  }

  static void record(String name, int index, Object o, long allocId, int eventSize) {
    ALLOC_IDS[index] = allocId;
    Facts.fact(name + ".alloc_id", Facts.hex(allocId));
    Facts.fact(name + ".named_id", Facts.hex(ResolveAgent.idOf(o)));
    Facts.fact(name + ".event_size", eventSize);
  }

  static void ask(String name, String point, long id) {
    for (String word : ResolveAgent.request(id).split(" ")) {
      final int eq = word.indexOf('=');
      Facts.fact(name + "." + point + "." + word.substring(0, eq), word.substring(eq + 1));
    }
  }

  static final String[] NAMES = {"small", "big", "ints", "strings", "late"};

  static void askAll(String point, int count) {
    for (int i = 0; i < count; i++) ask(NAMES[i], point, ALLOC_IDS[i]);
  }

  public static void main(String[] args) {
    ResolveAgent.load();
    // Garbage first, so that the objects below do not start at the bottom of the heap.
    Object[] before = new Object[5000];
    for (int i = 0; i < before.length; i++) before[i] = new byte[100];
    // Each class's first allocation also announces it (the runtime's own work may allocate):
    // done here, so that the last allocation below is the object itself.
    before[0] = new Small();
    before[1] = new Big();
    before[2] = new String[1];
    // Likewise each native's first call, which links it (the lookup allocates).
    ResolveAgent.lastAllocId();
    ResolveAgent.lastAllocSize();
    ResolveAgent.idOf(before);
    ResolveAgent.request(0);

    small = new Small();
    long id = ResolveAgent.lastAllocId();
    record("small", 0, small, id, ResolveAgent.lastAllocSize());
    big = new Big();
    id = ResolveAgent.lastAllocId();
    record("big", 1, big, id, ResolveAgent.lastAllocSize());
    ints = new int[1000];
    id = ResolveAgent.lastAllocId();
    record("ints", 2, ints, id, ResolveAgent.lastAllocSize());
    strings = new String[7];
    id = ResolveAgent.lastAllocId();
    record("strings", 3, strings, id, ResolveAgent.lastAllocSize());
    Object dead = new Small();
    final long deadId = ResolveAgent.lastAllocId();
    final WeakReference<Object> deadRef = new WeakReference<>(dead);
    Facts.fact("dead.alloc_id", Facts.hex(deadId));
    ask("dead", "new", deadId);
    dead = null;
    askAll("new", 4);

    before = null;
    churn();
    askAll("gc", 4);
    Facts.fact("dead.collected", deadRef.get() == null);
    ask("dead", "gc", deadId);

    late = new Small();
    id = ResolveAgent.lastAllocId();
    record("late", 4, late, id, ResolveAgent.lastAllocSize());
    churn();
    askAll("gc2", 5);
    Facts.fact("done", true);
  }
}
