// SPDX-License-Identifier: Apache-2.0
package jvmpi;

/**
 * The class that instrumented code calls. libjvmpi injects calls to these methods (see
 * docs/bci.md) only once it has registered their native implementations, which turn each call into
 * the JVMPI event the agent enabled: METHOD_ENTRY, METHOD_ENTRY2, METHOD_EXIT, INSTRUCTION_START
 * or MONITOR_CONTENDED_EXIT. The first two arguments of the method and instruction hooks name the
 * class (a number the runtime gave it when it was instrumented) and the method (its index in the
 * class file).
 */
public final class Tracker {
  private Tracker() {}

  public static native void methodEntry(int classNumber, int methodIndex);

  public static native void methodEntryWithReceiver(
      int classNumber, int methodIndex, Object receiver);

  public static native void methodExit(int classNumber, int methodIndex);

  public static native void objectInit(Object object);

  public static native void newArray(Object array);

  public static native void instruction(int classNumber, int methodIndex, int offset);

  public static native void instructionIf(
      int classNumber, int methodIndex, int offset, boolean taken);

  public static native void instructionTableswitch(
      int key, int low, int high, int classNumber, int methodIndex, int offset);

  public static native void instructionLookupswitch(
      int key, int pairs, int classNumber, int methodIndex, int offset);

  /**
   * How many threads are blocked entering a Java monitor, as the runtime counts them while
   * MONITOR_CONTENDED_EXIT is enabled. While it is 0 no released monitor has a contender, and
   * monitorExit costs one read.
   */
  static volatile int contenders;

  /** Called before a monitor is released (monitorexit, or any exit of a synchronized method). */
  public static void monitorExit(Object monitor) {
    if (contenders != 0) monitorExitContended(monitor);
  }

  private static native void monitorExitContended(Object monitor);
}
