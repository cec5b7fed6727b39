// SPDX-License-Identifier: Apache-2.0
package benchobjects;

/** A heap of args[0] small objects (Node), all live until the VM shuts down. */
public final class HeldObjects {
  static final class Node {
    int value;
    Node next;
  }

  static Node[] held;

  public static void main(String[] args) {
    final int count = Integer.parseInt(args[0]);
    held = new Node[count];
    for (int i = 0; i < count; i++) {
      held[i] = new Node();
      held[i].value = i;
      if (i > 0) held[i - 1].next = held[i];
    }
    System.out.println("held " + held.length + " nodes");
  }
}
