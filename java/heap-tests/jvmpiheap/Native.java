// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/** The JNI helper library (tests/jvmpi-heap/agents/native_lib.c). */
public final class Native {
  private Native() {}

  static void load() {
    System.load(System.getProperty("jvmpiheap.native"));
  }

  public static native Object allocObject(Class<?> c);

  public static native Object newObject(Class<?> c);

  public static native Object[] newObjectArray(Class<?> element, int length);

  public static native int[] newIntArray(int length);

  public static native String newString();

  public static native long newGlobalRef(Object o);

  public static native void deleteGlobalRef(long ref);

  public static native long newWeakGlobalRef(Object o);

  public static native void deleteWeakGlobalRef(long ref);
}
