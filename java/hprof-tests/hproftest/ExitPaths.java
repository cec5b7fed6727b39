// SPDX-License-Identifier: Apache-2.0
package hproftest;

import java.util.ArrayList;
import java.util.List;

/**
 * Ends in the way args[0] says: "normal" (main returns), "exit3" (System.exit(3)), "throw"
 * (uncaught exception), "block" (prints READY and blocks until killed), "oom" (allocates until
 * OutOfMemoryError, which ends main; the hoard is local to main, so once the error has left main
 * it is garbage, as in most programs an OutOfMemoryError ends), "oom-full" (the same with the
 * hoard in a static field, so the heap stays full to the end: HotSpot then cannot even create the
 * thread that destroys the VM, and posts no VMDeath unless the runtime's heap reserve made room).
 */
public final class ExitPaths {
  static final List<Object> HOARD = new ArrayList<>();

  static long work() {
    long s = 0;
    for (int i = 0; i < 5000; i++) {
      HOARD.add(new long[4]);
      s += Integer.toString(i).length();
    }
    return s;
  }

  public static void main(String[] args) throws Exception {
    Object lock = new Object();
    synchronized (lock) {
      lock.wait(1);
    }
    System.out.println("WORK " + work());
    switch (args[0]) {
      case "normal":
        System.out.println("END normal");
        return;
      case "exit3":
        System.out.println("END exit3");
        System.out.flush();
        System.exit(3);
        break;
      case "throw":
        System.out.println("END throw");
        System.out.flush();
        throw new IllegalStateException("uncaught on purpose");
      case "block":
        System.out.println("READY");
        System.out.flush();
        synchronized (lock) {
          while (true) lock.wait();
        }
      case "oom":
        System.out.println("END oom");
        System.out.flush();
        List<long[]> hoard = new ArrayList<>();
        while (true) hoard.add(new long[64 * 1024]);
      case "oom-full":
        System.out.println("END oom-full");
        System.out.flush();
        while (true) HOARD.add(new long[64 * 1024]);
      default:
        throw new IllegalArgumentException(args[0]);
    }
  }
}
