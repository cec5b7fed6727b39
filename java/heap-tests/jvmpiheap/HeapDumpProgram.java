// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;

/**
 * Heap dump truth. Builds a heap whose content is known exactly (a linked list, a binary tree, an
 * array of the tree's nodes, an object with a value of every primitive type and references,
 * primitive arrays, a class's static fields, an object held only by a JNI global reference, one
 * held only by a local variable of a waiting thread), parks every thread it started, and asks the
 * dump agent for HEAP_DUMP at levels 2, 1 and 0 and then the JVM for its own HPROF dump. Prints the
 * IDs of the objects the test looks for as FACT lines. The values are constants the test knows.
 */
public final class HeapDumpProgram {
  interface Shape {}

  interface Named {}

  static class Base {
    int baseInt = 0xB05E;
    Object baseRef;
  }

  static final class Prims extends Base implements Shape, Named {
    int i = 0x12345678;
    long l = 0x0123456789ABCDEFL;
    double d = -2.5e-3;
    boolean z = true;
    char c = '\u20AC';
    byte b = (byte) 0xA5;
    short s = (short) 0xBEEF;
    float f = 3.25f;
    Object ref;
  }

  static final class ListNode {
    int value;
    ListNode next;
  }

  static final class TreeNode {
    int key;
    TreeNode left, right;
  }

  static final class Holder {
    ListNode list;
    TreeNode tree;
    TreeNode[] nodes;
    int[] ints = {1, -2, Integer.MAX_VALUE, Integer.MIN_VALUE, 42};
    long[] longs = {Long.MIN_VALUE, -1L, 0x1122334455667788L};
    double[] doubles = {0.0, -1.5, Double.MAX_VALUE};
    boolean[] booleans = {true, false, true};
    char[] chars = {'a', '\u20AC', '\uFFFF'};
    byte[] bytes = {0, -1, 127, -128};
    short[] shorts = {1, -1, Short.MAX_VALUE};
    float[] floats = {0.5f, -0.25f, Float.MIN_VALUE};
    Prims prims;
  }

  static final class Statics {
    static int si = -123456;
    static long sl = 0x1122334455667788L;
    static double sd = Math.PI;
    static boolean sz = true;
    static char sc = '\u0416';
    static byte sb = -7;
    static short ss = -30000;
    static float sf = 1.5f;
    static Object sref;
  }

  static final class GlobalTarget {
    int tag = 77;
  }

  static final class LocalTarget {
    int tag = 88;
  }

  static final class Garbage {
    int[] payload = new int[4];
  }

  static final int LIST = 50, TREE = 31, GARBAGE = 25;
  static Holder holder;
  static volatile long localId;
  static volatile int sink;

  static TreeNode tree(int key, TreeNode[] nodes) {
    if (key > TREE) return null;
    TreeNode n = new TreeNode();
    n.key = key;
    nodes[key - 1] = n;
    n.left = tree(2 * key, nodes);
    n.right = tree(2 * key + 1, nodes);
    return n;
  }

  // Runs in thread "frame-holder": `local` is referenced only from this frame while it waits.
  static void holdLocal(CountDownLatch ready, Object gate) throws InterruptedException {
    LocalTarget local = new LocalTarget();
    localId = DumpAgent.idOf(local);
    synchronized (gate) {
      ready.countDown();
      gate.wait();
    }
    sink = local.tag;
  }

  public static void main(String[] args) throws Exception {
    DumpAgent.load();
    Native.load();
    final String out = System.getProperty("jvmpiheap.out");

    holder = new Holder();
    ListNode head = null;
    for (int v = LIST - 1; v >= 0; v--) {
      ListNode n = new ListNode();
      n.value = v;
      n.next = head;
      head = n;
    }
    holder.list = head;
    holder.nodes = new TreeNode[TREE];
    holder.tree = tree(1, holder.nodes);
    holder.prims = new Prims();
    holder.prims.ref = holder.tree;
    holder.prims.baseRef = holder.list;
    Statics.sref = holder.prims;
    for (int i = 0; i < GARBAGE; i++) sink += new Garbage().payload.length;

    GlobalTarget global = new GlobalTarget();
    final long globalId = DumpAgent.idOf(global);
    final long globalRef = Native.newGlobalRef(global);
    global = null;

    final Object gate = new Object();
    final CountDownLatch ready = new CountDownLatch(1);
    Thread frameHolder =
        new Thread(
            () -> {
              try {
                holdLocal(ready, gate);
              } catch (InterruptedException e) {
                throw new RuntimeException(e);
              }
            },
            "frame-holder");
    frameHolder.setDaemon(true);
    frameHolder.start();
    ready.await();
    while (frameHolder.getState() != Thread.State.WAITING) Thread.onSpinWait();

    Facts.fact("id_holder", Facts.hex(DumpAgent.idOf(holder)));
    Facts.fact("id_list", Facts.hex(DumpAgent.idOf(holder.list)));
    Facts.fact("id_tree", Facts.hex(DumpAgent.idOf(holder.tree)));
    Facts.fact("id_nodes", Facts.hex(DumpAgent.idOf(holder.nodes)));
    Facts.fact("id_prims", Facts.hex(DumpAgent.idOf(holder.prims)));
    Facts.fact("id_ints", Facts.hex(DumpAgent.idOf(holder.ints)));
    Facts.fact("id_longs", Facts.hex(DumpAgent.idOf(holder.longs)));
    Facts.fact("id_doubles", Facts.hex(DumpAgent.idOf(holder.doubles)));
    Facts.fact("id_booleans", Facts.hex(DumpAgent.idOf(holder.booleans)));
    Facts.fact("id_chars", Facts.hex(DumpAgent.idOf(holder.chars)));
    Facts.fact("id_bytes", Facts.hex(DumpAgent.idOf(holder.bytes)));
    Facts.fact("id_shorts", Facts.hex(DumpAgent.idOf(holder.shorts)));
    Facts.fact("id_floats", Facts.hex(DumpAgent.idOf(holder.floats)));
    Facts.fact("id_statics_class", Facts.hex(DumpAgent.idOf(Statics.class)));
    Facts.fact("id_global_target", Facts.hex(globalId));
    Facts.fact("global_ref", Facts.hex(globalRef));
    Facts.fact("id_local_target", Facts.hex(localId));
    Facts.fact("id_frame_thread", Facts.hex(DumpAgent.idOf(frameHolder)));
    Facts.fact("frame_thread", frameHolder.getName());

    // Everything is in place and parked; nothing below allocates until the dumps are taken.
    final String base2 = out + "/heap2", base1 = out + "/heap1", base0 = out + "/heap0";
    final String base2b = out + "/heap2b";
    final int rc2 = DumpAgent.heapDump(2, base2);
    final int rc1 = DumpAgent.heapDump(1, base1);
    final int rc0 = DumpAgent.heapDump(0, base0);
    final int rc2b = DumpAgent.heapDump(2, base2b);
    Facts.fact("rc_level2", rc2);
    Facts.fact("rc_level1", rc1);
    Facts.fact("rc_level0", rc0);
    Facts.fact("rc_level2b", rc2b);

    HotSpotDiagnosticMXBean diagnostic =
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    diagnostic.dumpHeap(out + "/jvm.hprof", true);
    Facts.fact("hprof_written", true);

    // Roots compared kind by kind: the JVM's dump and then ours, taken one after the other by one
    // thread while every other thread stays where it is (the dumping thread's own stack differs).
    final int[] rootsRc = {-1};
    Thread rootDumper =
        new Thread(
            () -> {
              try {
                diagnostic.dumpHeap(out + "/jvm-roots.hprof", false);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
              rootsRc[0] = DumpAgent.heapDump(2, out + "/heap2roots");
            },
            "root-dumper");
    rootDumper.start();
    rootDumper.join();
    Facts.fact("rc_roots", rootsRc[0]);

    synchronized (gate) {
      gate.notifyAll();
    }
    frameHolder.join();
    Native.deleteGlobalRef(globalRef);
    Facts.fact("local_tag_after_wait", sink);
  }
}
