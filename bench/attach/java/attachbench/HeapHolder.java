// SPDX-License-Identifier: Apache-2.0
package attachbench;

import java.util.ArrayList;
import java.util.List;

// An idle JVM with a heap worth dumping: args[0] small objects (each with a String and an int[])
// held live until stdin closes.
public class HeapHolder {
  static final class Item {
    final String name;
    final int[] values;

    Item(int i) {
      name = "item-" + i;
      values = new int[] {i, i * 2, i * 3};
    }
  }

  public static void main(String[] args) throws Exception {
    final int count = Integer.parseInt(args[0]);
    final List<Item> items = new ArrayList<>(count);
    for (int i = 0; i < count; ++i) items.add(new Item(i));
    System.out.println("ready " + items.size());
    System.out.flush();
    while (System.in.read() >= 0) {}
    System.out.println("done " + items.size());
  }
}
