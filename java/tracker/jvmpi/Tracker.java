package jvmpi;

/**
 * The class that instrumented code calls. libjvmpi injects calls to these methods (see
 * docs/bci.md) only once it has registered their native implementations, which turn each call into
 * the JVMPI event the agent enabled: METHOD_ENTRY, METHOD_ENTRY2, METHOD_EXIT or
 * INSTRUCTION_START. The first two arguments name the class (a number the runtime gave it when it
 * was instrumented) and the method (its index in the class file).
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
}
