// SPDX-License-Identifier: Apache-2.0
package bcitest;

import java.lang.reflect.Array;

/**
 * Tracker for the behavioural tests: records every hook call as a line. Single-threaded programs
 * only; the hooks are called from instrumented code, never from this class.
 */
public final class RecordingTracker {
  static final StringBuilder events = new StringBuilder(1 << 20);

  private RecordingTracker() {}

  public static void methodEntry(int cls, int method) {
    events.append("> ").append(cls).append(' ').append(method).append('\n');
  }

  public static void methodEntryWithReceiver(int cls, int method, Object receiver) {
    events.append("> ").append(cls).append(' ').append(method).append(" this=")
        .append(receiver.getClass().getName()).append('\n');
  }

  public static void methodExit(int cls, int method) {
    events.append("< ").append(cls).append(' ').append(method).append('\n');
  }

  public static void objectInit(Object o) {
    events.append("O ").append(o.getClass().getName()).append('\n');
  }

  public static void newArray(Object array) {
    events.append("A ").append(array.getClass().getName()).append(' ')
        .append(Array.getLength(array)).append('\n');
  }

  public static void instruction(int cls, int method, int offset) {
    events.append("I ").append(cls).append(' ').append(method).append(' ').append(offset)
        .append('\n');
  }

  public static void instructionIf(int cls, int method, int offset, boolean taken) {
    events.append("F ").append(cls).append(' ').append(method).append(' ').append(offset)
        .append(' ').append(taken ? 1 : 0).append('\n');
  }

  public static void instructionTableswitch(int key, int low, int high, int cls, int method,
      int offset) {
    events.append("T ").append(cls).append(' ').append(method).append(' ').append(offset)
        .append(' ').append(key).append(' ').append(low).append(' ').append(high).append('\n');
  }

  /** Records the monitor and whether this thread still holds it (it must: the hook runs first). */
  public static void monitorExit(Object monitor) {
    String what =
        monitor instanceof Class<?> ? "class " + ((Class<?>) monitor).getName()
            : monitor.getClass().getName();
    events.append("M ").append(Thread.holdsLock(monitor) ? "held " : "NOT-HELD ").append(what)
        .append('\n');
  }

  public static void instructionLookupswitch(int key, int pairs, int cls, int method,
      int offset) {
    events.append("L ").append(cls).append(' ').append(method).append(' ').append(offset)
        .append(' ').append(key).append(' ').append(pairs).append('\n');
  }
}
