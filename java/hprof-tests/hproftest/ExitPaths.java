package hproftest;

import java.util.ArrayList;
import java.util.List;

/**
 * Ends in the way args[0] says: "normal" (main returns), "exit3" (System.exit(3)), "throw"
 * (uncaught exception), "block" (prints READY and blocks until killed), "oom" (allocates until
 * OutOfMemoryError, which ends main). The OOM hoard is local to main, so once the error has left
 * main it is garbage, as in most programs an OutOfMemoryError ends: with a heap that stays full,
 * HotSpot does not even post VMDeath to a plain JVMTI agent, and no agent can write at exit.
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
      default:
        throw new IllegalArgumentException(args[0]);
    }
  }
}
