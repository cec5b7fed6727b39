// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.io.InputStream;
import java.lang.ref.WeakReference;
import java.util.function.Supplier;

/**
 * Defines jvmpitest.Unloadable in a class loader of its own, drops the loader, and collects until
 * the loader is gone; then waits (bounded) until the agent has seen the class unloaded.
 */
public class UnloadProgram {
  static final String NAME = "jvmpitest.Unloadable";

  static final class OneClassLoader extends ClassLoader {
    private final byte[] bytes;

    OneClassLoader(byte[] bytes) {
      super(null); // the class must not be found by delegation
      this.bytes = bytes;
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      if (!name.equals(NAME)) throw new ClassNotFoundException(name);
      return defineClass(name, bytes, 0, bytes.length);
    }
  }

  @SuppressWarnings("unchecked")
  static WeakReference<ClassLoader> loadAndDrop(byte[] bytes) throws Exception {
    ClassLoader loader = new OneClassLoader(bytes);
    Class<?> c = loader.loadClass(NAME);
    Supplier<String> s = (Supplier<String>) c.getDeclaredConstructor().newInstance();
    Facts.fact("FACT", "loaded", s.get(), "loader_is_custom", c.getClassLoader() == loader);
    return new WeakReference<>(loader);
  }

  public static void main(String[] args) throws Exception {
    byte[] bytes;
    try (InputStream in = UnloadProgram.class.getResourceAsStream("Unloadable.class")) {
      bytes = in.readAllBytes();
    }
    WeakReference<ClassLoader> ref = loadAndDrop(bytes);
    for (int i = 0; i < 200 && ref.get() != null; i++) System.gc();
    Facts.fact("FACT", "loader_cleared", ref.get() == null);
    // CLASS_UNLOAD comes from the runtime's reporter thread after the collection: wait for it.
    boolean seen =
        Facts.await(
            () -> {
              if (Agent.hook(2, 0, null) > 0) return true;
              System.gc();
              return false;
            },
            20_000);
    Facts.fact("FACT", "unload_seen", seen);
    if (seen) Agent.hook(3, 0, null);
  }
}
