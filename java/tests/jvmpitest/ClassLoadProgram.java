// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Loads a nested class with known methods, fields and interfaces, and prints what reflection and
 * the methods themselves (their first and last source lines) say about it. Then asks the agent
 * to request the class's CLASS_LOAD event again.
 */
public class ClassLoadProgram {
  static final class Inner implements Runnable, java.io.Serializable {
    static int counter = 7;
    static String label;
    long total;
    Object[] items;
    static int runLine;

    int[] alpha(int x) {
      int first = Facts.line();
      int y = x * 2;
      return new int[] {first, Facts.line(), y};
    }

    static int[] beta(String s, long[] values) {
      int first = Facts.line();
      int n = s.length() + values.length;
      n += counter;
      return new int[] {first, Facts.line(), n};
    }

    @Override
    public void run() { runLine = Facts.line(); }
  }

  static String descriptor(Method m) {
    return MethodType.methodType(m.getReturnType(), m.getParameterTypes())
        .toMethodDescriptorString();
  }

  public static void main(String[] args) {
    Inner inner = new Inner();
    int[] a = inner.alpha(1);
    int[] b = Inner.beta("xy", new long[3]);
    inner.run();
    Facts.fact("LINES", "name", "alpha", "first", a[0], "last", a[1]);
    Facts.fact("LINES", "name", "beta", "first", b[0], "last", b[1]);
    Facts.fact("LINES", "name", "run", "first", Inner.runLine, "last", Inner.runLine);

    Class<?> c = Inner.class;
    Facts.fact("CLASS", "name", c.getName(), "interfaces", c.getInterfaces().length);
    for (Method m : c.getDeclaredMethods()) {
      Facts.fact("METHOD", "name", m.getName(), "sig", descriptor(m));
    }
    for (Constructor<?> k : c.getDeclaredConstructors()) {
      Facts.fact(
          "METHOD",
          "name", "<init>",
          "sig", MethodType.methodType(void.class, k.getParameterTypes()).toMethodDescriptorString());
    }
    for (Field f : c.getDeclaredFields()) {
      Facts.fact(
          "FIELD",
          "kind", Modifier.isStatic(f.getModifiers()) ? "static" : "instance",
          "name", f.getName(),
          "sig", f.getType().descriptorString());
    }
    Agent.hook(1, 0, c);
    Facts.fact("FACT", "done", 1);
  }
}
