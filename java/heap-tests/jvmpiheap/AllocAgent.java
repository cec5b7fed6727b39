// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

/** Natives of the allocation agent (tests/jvmpi-heap/agents/alloc_agent.c). */
public final class AllocAgent {
  private AllocAgent() {}

  static void load() {
    System.load(System.getProperty("jvmpiheap.agent"));
  }

  /** From now on, this thread's allocations are counted under the label. */
  public static native void begin(String label);

  /** Stops counting this thread's allocations. */
  public static native void end();

  /** Waits until that many counted objects have been freed (at most timeoutMs); the count. */
  public static native long awaitFreed(long expected, int timeoutMs);

  /** Writes the per-label statistics to the file. */
  public static native void report(String path);

  /** The object's JVMPI object ID. */
  public static native long idOf(Object o);

  /** How many of the objects the agent saw in OBJECT_ALLOC events. */
  public static native int countReported(Object[] objects);
}
