// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/** Natives of the dump agent (tests/jvmpi-heap/agents/dump_agent.c). */
public final class DumpAgent {
  private DumpAgent() {}

  static void load() {
    System.load(System.getProperty("jvmpiheap.agent"));
  }

  /** The object's JVMPI object ID. */
  public static native long idOf(Object o);

  /** RequestEvent(HEAP_DUMP) at the level; the agent writes base.bin and base.txt. */
  public static native int heapDump(int level, String base);

  /** RequestEvent(OBJECT_DUMP) of the object. */
  public static native int objectDump(Object o, String base);

  /** RequestEvent(MONITOR_DUMP). */
  public static native int monitorDump(String base);

  /** Agent threads: one holds a raw monitor, one blocks entering it. The raw monitor ID or 0. */
  public static native long startRawScenario();

  /** Releases the raw monitor; 1 when both agent threads got through. */
  public static native int endRawScenario();
}
