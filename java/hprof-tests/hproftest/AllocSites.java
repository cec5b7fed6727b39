// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

/**
 * Known answer for heap=sites: allocate() makes KEEP + DROP Payloads at one allocation site (one
 * line, one call path), keeps KEEP of them, drops the rest, and collects until every dropped one
 * is gone. The site must show KEEP live objects and KEEP + DROP allocated ones.
 */
public final class AllocSites {
  /** 12-byte header + two longs = 28, aligned to 32 bytes (compressed class pointers). */
  static final class Payload {
    long a;
    long b;
  }

  static final ArrayList<Payload> KEPT = new ArrayList<>();

  static List<WeakReference<Payload>> allocate(int keep, int drop) {
    List<WeakReference<Payload>> dropped = new ArrayList<>(drop);
    for (int i = 0; i < keep + drop; i++) {
      Payload p = new Payload(); // the one allocation site of Payload
      p.a = i;
      if (i < keep) {
        KEPT.add(p);
      } else {
        dropped.add(new WeakReference<>(p));
      }
    }
    return dropped;
  }

  public static void main(String[] args) {
    final int keep = Integer.parseInt(args[0]);
    final int drop = Integer.parseInt(args[1]);
    KEPT.ensureCapacity(keep);
    List<WeakReference<Payload>> dropped = allocate(keep, drop);
    // Collect until every dropped Payload is known to be gone.
    int gcs = 0;
    for (WeakReference<Payload> w : dropped) {
      while (w.get() != null) {
        System.gc();
        gcs++;
      }
    }
    System.out.println("ALLOCSITES kept=" + KEPT.size() + " dropped=" + dropped.size() + " gcs=" + gcs);
  }
}
