// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * The conformance agent's Java-side entry: the agent library is also loaded as a JNI library
 * (System.load of the same file returns the already loaded image), so a test program can ask the
 * agent to act at a known point of its execution, on its own thread.
 */
public final class Agent {
  private Agent() {}

  static {
    System.load(System.getProperty("jvmpitest.agent"));
  }

  /** Agent-specific request; see the agent's Java_jvmpitest_Agent_hook. */
  public static native long hook(int code, long arg, Object obj);
}
