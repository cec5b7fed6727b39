// SPDX-License-Identifier: Apache-2.0
package benchobjects;

import java.io.IOException;

/**
 * A heap of args[0] small objects (Node), all live until the VM shuts down. With a second
 * argument "wait" it then waits for a line (or the end) on stdin before it exits, so that a tool
 * can dump the heap meanwhile.
 */
public final class HeldObjects {
  static final class Node {
    int value;
    Node next;
  }

  static Node[] held;

  public static void main(String[] args) throws IOException {
    final int count = Integer.parseInt(args[0]);
    held = new Node[count];
    for (int i = 0; i < count; i++) {
      held[i] = new Node();
      held[i].value = i;
      if (i > 0) held[i - 1].next = held[i];
    }
    System.out.println("held " + held.length + " nodes");
    if (args.length > 1 && args[1].equals("wait")) {
      System.out.flush();
      while (true) {
        final int c = System.in.read();
        if (c == -1 || c == '\n') break;
      }
    }
  }
}
