// SPDX-License-Identifier: Apache-2.0
package hproftest;

/**
 * Known answer for heap=dump: a small graph of exactly three Nodes reachable from the static field
 * ROOT, with every reference field set to a known object:
 *
 * <pre>
 *   ROOT = a;  a.left = b;  a.right = c;  a.label = "alpha";  a.kids = {b, null, c}
 *   b.left = c;  b.right = null;  b.label = null
 *   c.left = null;  c.right = a;  c.label = "gamma"
 * </pre>
 */
public final class HeapGraph {
  static final class Node {
    Node left;
    Node right;
    String label;
    Node[] kids;
    int weight; // primitive: must not be printed as a field
  }

  static Node ROOT;

  public static void main(String[] args) {
    Node a = new Node();
    Node b = new Node();
    Node c = new Node();
    a.left = b;
    a.right = c;
    a.label = "alpha";
    a.kids = new Node[] {b, null, c};
    a.weight = 1;
    b.left = c;
    b.weight = 2;
    c.right = a;
    c.label = "gamma";
    c.weight = 3;
    ROOT = a;
    System.out.println("HEAPGRAPH " + (a.weight + b.weight + c.weight));
  }
}
