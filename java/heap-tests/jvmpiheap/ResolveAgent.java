// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/** Natives of the resolve agent (tests/jvmpi-heap/agents/resolve_agent.c). */
public final class ResolveAgent {
  private ResolveAgent() {}

  static void load() {
    System.load(System.getProperty("jvmpiheap.agent"));
  }

  /** The ID of the calling thread's last allocation, from its OBJECT_ALLOC event. */
  public static native long lastAllocId();

  /** The size its OBJECT_ALLOC event gave. */
  public static native int lastAllocSize();

  /** The object's JVMPI object ID (jobject2jobjectID). */
  public static native long idOf(Object o);

  /**
   * RequestEvent(OBJECT_ALLOC) and RequestEvent(OBJECT_DUMP) of the ID: "key=value" words
   * rc_alloc, class, size, kind, rc_dump, dump_type, dump_id_ok, dump_class.
   */
  public static native String request(long id);
}
