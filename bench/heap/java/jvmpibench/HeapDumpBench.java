// SPDX-License-Identifier: Apache-2.0
package jvmpibench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;

/**
 * Builds a heap with about 1 GiB of live data: chains of small objects (12.5M of 32 bytes each
 * with compressed references) and 10,000 long[] arrays of 64 KiB. Then reads commands from stdin:
 * "jvmpi <file>" takes a level-2 JVMPI heap dump through the bench dump agent (which prints its
 * numbers), "stream <file>" the same dump through the runtime's StreamHeapDump, "quit" ends.
 * Prints READY (with live heap bytes after a full GC) when built.
 *
 * <p>With -Djvmpibench.mixed=true the same objects are laid out otherwise: each array is the
 * payload of a chain's first node (while there are chains) instead of held apart, so a heap walk
 * meets the arrays spread among the small objects rather than all in one run.
 */
public final class HeapDumpBench {
  static final class Node {
    long a;
    int b;
    Node next;
    Object payload;
  }

  static Node[] chains;
  static long[][] arrays;

  static native void dump(String path);

  static native void stream(String path);

  public static void main(String[] args) throws Exception {
    final int chainCount = args.length > 0 ? Integer.parseInt(args[0]) : 12_500;
    final int chainLength = args.length > 1 ? Integer.parseInt(args[1]) : 1_000;
    final int arrayCount = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
    System.load(System.getProperty("jvmpibench.agent"));
    chains = new Node[chainCount];
    for (int c = 0; c < chainCount; c++) {
      Node head = null;
      for (int i = 0; i < chainLength; i++) {
        Node n = new Node();
        n.a = i;
        n.b = c;
        n.next = head;
        head = n;
      }
      chains[c] = head;
    }
    arrays = new long[arrayCount][];
    for (int i = 0; i < arrayCount; i++) {
      arrays[i] = new long[8192];
      arrays[i][i & 8191] = i;
    }
    if (Boolean.getBoolean("jvmpibench.mixed")) {
      final int attached = Math.min(chainCount, arrayCount);
      for (int i = 0; i < attached; i++) chains[i].payload = arrays[i];
      long[][] rest = new long[arrayCount - attached][];
      System.arraycopy(arrays, attached, rest, 0, rest.length);
      arrays = rest;
    }
    System.gc();
    long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    System.out.println("READY pid=" + ProcessHandle.current().pid() + " live_bytes=" + used
        + " objects=" + ((long) chainCount * chainLength + arrayCount));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.startsWith("jvmpi ")) {
        dump(line.substring(6));
      } else if (line.startsWith("stream ")) {
        stream(line.substring(7));
      } else if (line.equals("quit")) {
        break;
      }
    }
    System.out.println("DONE " + (chains.length + arrays.length));
  }
}
