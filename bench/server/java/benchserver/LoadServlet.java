// SPDX-License-Identifier: Apache-2.0
package benchserver;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The server benchmark's request: some CPU (a xorshift loop), some allocation (a list of small
 * objects and the strings of the response) and a lock every request takes (a shared, bounded map
 * of recent results), so a profiler's CPU, allocation and monitor modes all have work under load.
 * Query parameters (optional): spin (xorshift steps, default 100000), items (objects allocated,
 * default 400).
 */
public final class LoadServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;

  /** A small object of the request's allocation. */
  static final class Item {
    final long key;
    final String label;

    Item(long key) {
      this.key = key;
      this.label = (key & 15) == 0 ? Long.toHexString(key) : null;
    }
  }

  /** The contended lock: recent results, shared by all requests. */
  private static final Map<Long, Long> RECENT =
      new LinkedHashMap<>(256, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
          return size() > 200;
        }
      };

  static long cpuWork(long seed, int spin) {
    long x = seed | 1;
    for (int i = 0; i < spin; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
    }
    return x;
  }

  static List<Item> allocate(long seed, int items) {
    List<Item> list = new ArrayList<>();
    for (int i = 0; i < items; i++) {
      list.add(new Item(seed + i));
    }
    return list;
  }

  static long record(long key, long value) {
    synchronized (RECENT) {
      Long old = RECENT.put(key & 1023, value);
      long sum = 0;
      for (long v : RECENT.values()) {
        sum += v;
      }
      return sum + (old == null ? 0 : old);
    }
  }

  private static int param(HttpServletRequest request, String name, int fallback) {
    String value = request.getParameter(name);
    if (value == null) {
      return fallback;
    }
    try {
      return Math.max(0, Math.min(Integer.parseInt(value), 10_000_000));
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    final int spin = param(request, "spin", 100_000);
    final int items = param(request, "items", 400);
    final long seed = System.nanoTime();
    final long hash = cpuWork(seed, spin);
    final List<Item> list = allocate(hash, items);
    long labels = 0;
    for (Item item : list) {
      if (item.label != null) {
        labels += item.label.length();
      }
    }
    final long total = record(seed, hash + labels);
    response.setContentType("text/plain");
    // A fixed length: ab counts a response whose length differs from the first one's as failed.
    response.getWriter().println(String.format("ok %06d %016x", list.size(), total));
  }
}
