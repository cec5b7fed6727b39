// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * An array of a class allocated before that class's first instance: `new Element[n]` in a static
 * initializer loads Element (anewarray) without linking it; the first `new Element()` links it.
 */
public class ArrayInitProgram {
  static final class Element {
    int value;
  }

  static final class Holder {
    static final Object[] ELEMENTS = new Element[4];
  }

  public static void main(String[] args) {
    Object[] elements = Holder.ELEMENTS;
    elements[0] = new Element();
    Facts.fact("FACT", "elements", elements.length);
  }
}
