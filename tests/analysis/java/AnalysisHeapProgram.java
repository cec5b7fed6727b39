// SPDX-License-Identifier: Apache-2.0
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

// A heap with planted structure for the analyzer's tests. Prints "ready" once built, then reads
// commands from stdin: "grow" adds GROW more leak entries (prints "grown"); end of input exits.
public class AnalysisHeapProgram {
  static final int LEAKS = 5000;
  static final int GROW = 1000;
  static final int DUPLICATES = 300;
  static final int RING = 10;

  // A leak: LEAKS entries, each a Leak holding a 64-byte payload, all held by one map.
  static final class Leak {
    final byte[] payload = new byte[64];
    long serial;
  }

  static HashMap<Integer, Leak> LEAK_MAP = new HashMap<>();

  // A diamond: top -> left, right; left -> shared, right -> shared; shared -> int[1000].
  static final class DiamondTop {
    DiamondSide left, right;
  }

  static final class DiamondSide {
    DiamondShared shared;
  }

  static final class DiamondShared {
    int[] data = new int[1000];
  }

  static DiamondTop DIAMOND;

  // A cycle of RING nodes entered only through RING_HEAD.
  static final class RingNode {
    RingNode next;
    int index;
  }

  static RingNode RING_HEAD;

  // Soft and weak references: a softly reachable payload that nothing else holds, and a weak
  // reference to an object that is also held strongly.
  static final class SoftPayload {
    byte[] bytes = new byte[200_000];
  }

  static final class WeakTarget {
    long value = 7;
  }

  static SoftReference<SoftPayload> SOFT;
  static WeakTarget STRONG_TARGET;
  static WeakReference<WeakTarget> WEAK;

  // One big array.
  static long[] BIG = new long[1_000_000];

  // Duplicate strings: DUPLICATES separate copies of one value, held by one list.
  static List<String> DUPLICATE_HOLDER = new ArrayList<>();

  static void grow(int from, int count) {
    for (int i = from; i < from + count; i++) {
      Leak leak = new Leak();
      leak.serial = i;
      LEAK_MAP.put(1000 + i, leak);
    }
  }

  public static void main(String[] args) throws Exception {
    grow(0, LEAKS);
    DIAMOND = new DiamondTop();
    DIAMOND.left = new DiamondSide();
    DIAMOND.right = new DiamondSide();
    DiamondShared shared = new DiamondShared();
    DIAMOND.left.shared = shared;
    DIAMOND.right.shared = shared;
    RingNode[] ring = new RingNode[RING];
    for (int i = 0; i < RING; i++) {
      ring[i] = new RingNode();
      ring[i].index = i;
    }
    for (int i = 0; i < RING; i++) ring[i].next = ring[(i + 1) % RING];
    RING_HEAD = ring[0];
    ring = null;
    shared = null;
    SOFT = new SoftReference<>(new SoftPayload());
    STRONG_TARGET = new WeakTarget();
    WEAK = new WeakReference<>(STRONG_TARGET);
    char[] chars = "planted-duplicate-value".toCharArray();
    for (int i = 0; i < DUPLICATES; i++) DUPLICATE_HOLDER.add(new String(chars));
    System.out.println("ready");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    int grown = LEAKS;
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("grow")) {
        grow(grown, GROW);
        grown += GROW;
        System.out.println("grown");
        System.out.flush();
      }
    }
  }
}
