// SPDX-License-Identifier: Apache-2.0
package jvmpiheap;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * Allocation coverage: for each way a Java program can get a new object, makes N objects that way,
 * keeps them, and asks the allocation agent how many of exactly those objects (by object ID) it saw
 * in OBJECT_ALLOC events. Each path runs once uncounted first, so one-time work (class loading,
 * call-site linking, lambda and proxy class spinning) is out of the way. Prints
 * {@code COVER <path> <expected> <reported>} per path.
 */
public final class CoverageProgram {
  static final int N = 200;

  public static final class Plain {
    public int v;

    public Plain() {}
  }

  public static final class Reflected {
    public Reflected() {}
  }

  public static final class ArrayElem {}

  public static final class Cloned implements Cloneable {
    int v = 7;

    @Override
    public Cloned clone() {
      try {
        return (Cloned) super.clone();
      } catch (CloneNotSupportedException e) {
        throw new AssertionError(e);
      }
    }
  }

  public static final class JniAllocated {
    public int v = 1;

    public JniAllocated() {}
  }

  public static final class JniNew {
    public JniNew() {}
  }

  public static final class ViaHandle {
    public ViaHandle() {}
  }

  public static final class Serial implements Serializable {
    private static final long serialVersionUID = 1L;
    int v;

    Serial(int v) {
      this.v = v;
    }
  }

  public static final class ViaUnsafe {}

  interface Marker {
    int mark();
  }

  interface Path {
    void make(Object[] out) throws Throwable;
  }

  static int zero = 0;
  static Object nothing = null;
  static final Object[] sink = new Object[1];

  static void measure(String name, Path path) throws Throwable {
    path.make(new Object[N]); // uncounted: one-time work of this path
    Object[] out = new Object[N];
    path.make(out);
    int distinct = (int) Arrays.stream(out).filter(o -> o != null).map(System::identityHashCode)
        .count();
    int reported = AllocAgent.countReported(out);
    System.out.println("COVER " + name + " " + distinct + " " + reported);
  }

  // A method the JIT compiles: called often enough for C1 and C2 (with -Xbatch, synchronously).
  static Plain hotNew(int i) {
    Plain p = new Plain();
    p.v = i;
    return p;
  }

  public static void main(String[] args) throws Throwable {
    AllocAgent.load();
    Native.load();

    measure("new (interpreted)", out -> {
      for (int i = 0; i < N; i++) out[i] = new Plain();
    });
    measure("new (JIT-compiled)", out -> {
      for (int round = 0; round < 200; round++) {
        for (int i = 0; i < N; i++) sink[0] = hotNew(i);
      }
      for (int i = 0; i < N; i++) out[i] = hotNew(i);
    });
    measure("new int[] (bytecode)", out -> {
      for (int i = 0; i < N; i++) out[i] = new int[i % 5];
    });
    measure("Constructor.newInstance", out -> {
      Constructor<Reflected> c = Reflected.class.getConstructor();
      for (int i = 0; i < N; i++) out[i] = c.newInstance();
    });
    measure("Array.newInstance (object)", out -> {
      for (int i = 0; i < N; i++) out[i] = Array.newInstance(ArrayElem.class, 3);
    });
    measure("Array.newInstance (int)", out -> {
      for (int i = 0; i < N; i++) out[i] = Array.newInstance(int.class, 4);
    });
    final Cloned prototype = new Cloned();
    measure("Object.clone()", out -> {
      for (int i = 0; i < N; i++) out[i] = prototype.clone();
    });
    final long[] longs = new long[10];
    measure("array clone()", out -> {
      for (int i = 0; i < N; i++) out[i] = longs.clone();
    });
    measure("Arrays.copyOf", out -> {
      for (int i = 0; i < N; i++) out[i] = Arrays.copyOf(longs, 12);
    });
    measure("JNI AllocObject", out -> {
      for (int i = 0; i < N; i++) out[i] = Native.allocObject(JniAllocated.class);
    });
    measure("JNI NewObject", out -> {
      for (int i = 0; i < N; i++) out[i] = Native.newObject(JniNew.class);
    });
    measure("JNI NewObjectArray", out -> {
      for (int i = 0; i < N; i++) out[i] = Native.newObjectArray(ArrayElem.class, 2);
    });
    measure("JNI NewIntArray", out -> {
      for (int i = 0; i < N; i++) out[i] = Native.newIntArray(3);
    });
    measure("JNI NewStringUTF", out -> {
      for (int i = 0; i < N; i++) out[i] = Native.newString();
    });
    final MethodHandle ctor =
        MethodHandles.lookup().findConstructor(ViaHandle.class, MethodType.methodType(void.class));
    measure("MethodHandle constructor", out -> {
      for (int i = 0; i < N; i++) out[i] = (ViaHandle) ctor.invokeExact();
    });
    final byte[] serialized;
    {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream o = new ObjectOutputStream(bytes)) {
        Serial[] all = new Serial[N];
        for (int i = 0; i < N; i++) all[i] = new Serial(i);
        o.writeObject(all);
      }
      serialized = bytes.toByteArray();
    }
    measure("deserialization", out -> {
      try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(serialized))) {
        Serial[] all = (Serial[]) in.readObject();
        System.arraycopy(all, 0, out, 0, N);
      }
    });
    measure("boxing (Integer beyond cache)", out -> {
      for (int i = 0; i < N; i++) out[i] = Integer.valueOf(100_000 + i);
    });
    measure("boxing (Long, Double)", out -> {
      for (int i = 0; i < N; i += 2) {
        out[i] = Long.valueOf(100_000L + i);
        out[i + 1] = Double.valueOf(i + 0.5);
      }
    });
    measure("String concatenation", out -> {
      for (int i = 0; i < N; i++) out[i] = "item-" + i;
    });
    measure("StringBuilder.toString", out -> {
      for (int i = 0; i < N; i++) out[i] = new StringBuilder("sb-").append(i).toString();
    });
    measure("VM-thrown ArithmeticException", out -> {
      for (int i = 0; i < N; i++) {
        try {
          sink[0] = 1 / zero;
        } catch (ArithmeticException e) {
          out[i] = e;
        }
      }
    });
    measure("VM-thrown NullPointerException", out -> {
      for (int i = 0; i < N; i++) {
        try {
          sink[0] = nothing.hashCode();
        } catch (NullPointerException e) {
          out[i] = e;
        }
      }
    });
    measure("VM-thrown ArrayIndexOutOfBounds", out -> {
      int[] small = new int[1];
      for (int i = 0; i < N; i++) {
        try {
          sink[0] = small[i + 1];
        } catch (ArrayIndexOutOfBoundsException e) {
          out[i] = e;
        }
      }
    });
    measure("capturing lambda", out -> {
      for (int i = 0; i < N; i++) {
        final int v = i;
        IntSupplier s = () -> v;
        out[i] = s;
      }
    });
    measure("Proxy.newProxyInstance", out -> {
      InvocationHandler h = (proxy, method, a) -> 42;
      ClassLoader loader = CoverageProgram.class.getClassLoader();
      for (int i = 0; i < N; i++) {
        out[i] = Proxy.newProxyInstance(loader, new Class<?>[] {Marker.class}, h);
      }
    });
    Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
    f.setAccessible(true);
    final Object unsafe = f.get(null);
    final MethodHandle allocateInstance =
        MethodHandles.lookup()
            .findVirtual(unsafe.getClass(), "allocateInstance",
                MethodType.methodType(Object.class, Class.class))
            .bindTo(unsafe);
    measure("Unsafe.allocateInstance", out -> {
      for (int i = 0; i < N; i++) out[i] = allocateInstance.invoke(ViaUnsafe.class);
    });
    final Thread[] holder = new Thread[1];
    measure("new thread's allocations", out -> {
      holder[0] = new Thread(() -> {
        for (int i = 0; i < N; i++) out[i] = new Plain();
      }, "coverage-thread");
      holder[0].start();
      holder[0].join();
    });
    System.out.flush();
  }
}
