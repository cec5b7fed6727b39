// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/**
 * JNI global and weak global references made and deleted by a native library (Native): the
 * program prints each reference and the JVMPI ID of its object, for the test to find the
 * JNI_GLOBALREF_ALLOC/FREE and JNI_WEAK_GLOBALREF_ALLOC/FREE events.
 */
public final class JniRefProgram {
  static final class GlobalTarget {}

  static final class WeakTarget {}

  public static void main(String[] args) {
    AllocAgent.load();
    Native.load();
    GlobalTarget g = new GlobalTarget();
    WeakTarget w = new WeakTarget();
    int[] ints = new int[3];
    Facts.fact("id_global", Facts.hex(AllocAgent.idOf(g)));
    Facts.fact("id_weak", Facts.hex(AllocAgent.idOf(w)));
    Facts.fact("id_ints", Facts.hex(AllocAgent.idOf(ints)));

    long gref = Native.newGlobalRef(g);
    long wref = Native.newWeakGlobalRef(w);
    long iref = Native.newGlobalRef(ints);
    Facts.fact("global_ref", Facts.hex(gref));
    Facts.fact("weak_ref", Facts.hex(wref));
    Facts.fact("ints_ref", Facts.hex(iref));
    Native.deleteGlobalRef(gref);
    Native.deleteWeakGlobalRef(wref);
    Native.deleteGlobalRef(iref);
    Facts.fact("deleted", true);
    System.out.println(g.hashCode() + w.hashCode() + ints.length > 0 ? "" : "-");
  }
}
