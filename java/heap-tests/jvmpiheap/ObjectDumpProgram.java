// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

import java.io.Serializable;

/**
 * OBJECT_DUMP of a known instance, an object array, a primitive array and a class object. The dump
 * agent writes each record to obj-<name>.bin/.txt; the IDs the test expects are printed as FACTs.
 */
public final class ObjectDumpProgram {
  interface Tagged {}

  static class Base2 {
    int baseInt = -99;
    Object baseRef;
  }

  static final class Sample extends Base2 implements Serializable, Tagged {
    private static final long serialVersionUID = 1L;
    static int count = 3;
    static Object self;
    static double ratio = 0.125;

    int i = -7;
    long l = Long.MIN_VALUE + 1;
    double d = 6.02214076e23;
    boolean z = false;
    char c = 'Q';
    byte b = 0x7F;
    short s = -2;
    float f = -0.0f;
    Object ref;
  }

  /** Objects of many shapes whose OBJECT_DUMP records the heap dump taken after must repeat. */
  static Object[] matched;

  /**
   * "match": OBJECT_DUMP of each of `matched` to obj-match-<i>, then a level-2 HEAP_DUMP to
   * match-heap; the IDs are printed as FACT match_<i>.
   */
  static void match(String out) {
    Sample a = new Sample();
    a.ref = new Sample();
    a.baseRef = "a string";
    java.util.HashMap<String, Integer> map = new java.util.HashMap<>();
    map.put("one", 1);
    map.put("two", 2);
    java.util.ArrayList<Object> list = new java.util.ArrayList<>(java.util.List.of(a, "x", 3L));
    matched =
        new Object[] {
          a,
          a.ref,
          "a string",
          map,
          list,
          Integer.valueOf(123456),
          new java.lang.ref.WeakReference<>(a),
          new Object(),
          new Object[] {a, null, map, "x"},
          new Sample[0],
          new int[] {1, -1, Integer.MIN_VALUE},
          new long[] {Long.MIN_VALUE, 0, 7},
          new char[] {'h', 'i', '\uFFFF'},
          new byte[] {-128, 0, 127},
          new short[] {-32768, 1},
          new boolean[] {true, false, true},
          new float[] {Float.NaN, -0.0f, 1.5f},
          new double[] {Double.NEGATIVE_INFINITY, 0.1},
          new int[0],
          new int[3][2],
          new StringBuilder("builder"),
        };
    for (int i = 0; i < matched.length; i++) {
      Facts.fact("match_" + i, Facts.hex(DumpAgent.idOf(matched[i])));
      Facts.fact("match_rc_" + i, DumpAgent.objectDump(matched[i], out + "/obj-match-" + i));
    }
    Facts.fact("match_count", matched.length);
    Facts.fact("match_heap_rc", DumpAgent.heapDump(2, out + "/match-heap"));
  }

  public static void main(String[] args) {
    DumpAgent.load();
    final String out = System.getProperty("jvmpiheap.out");
    if (args.length > 0 && args[0].equals("match")) {
      match(out);
      return;
    }
    Sample a = new Sample();
    Sample b = new Sample();
    a.ref = b;
    a.baseRef = "a string";
    Sample.self = a;
    Sample[] array = {a, null, b};
    long[] longs = {1L, -2L, Long.MAX_VALUE};

    Facts.fact("id_a", Facts.hex(DumpAgent.idOf(a)));
    Facts.fact("id_b", Facts.hex(DumpAgent.idOf(b)));
    Facts.fact("id_string", Facts.hex(DumpAgent.idOf(a.baseRef)));
    Facts.fact("id_array", Facts.hex(DumpAgent.idOf(array)));
    Facts.fact("id_longs", Facts.hex(DumpAgent.idOf(longs)));
    Facts.fact("id_sample_class", Facts.hex(DumpAgent.idOf(Sample.class)));
    Facts.fact("id_base_class", Facts.hex(DumpAgent.idOf(Base2.class)));

    Facts.fact("rc_instance", DumpAgent.objectDump(a, out + "/obj-instance"));
    Facts.fact("rc_array", DumpAgent.objectDump(array, out + "/obj-array"));
    Facts.fact("rc_longs", DumpAgent.objectDump(longs, out + "/obj-longs"));
    Facts.fact("rc_class", DumpAgent.objectDump(Sample.class, out + "/obj-class"));
    Facts.fact("rc_base_class", DumpAgent.objectDump(Base2.class, out + "/obj-base-class"));
    Facts.fact("kept", array.length + longs.length);
  }
}
