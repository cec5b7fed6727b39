// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * On the thread "jvmpitest-caller": ROUNDS calls of Worker.work -> middle -> leaf (enough for the
 * JIT to compile them), and THROWS calls of thrower, which leaves by an exception. Then asks the
 * agent to log what it counted (hook 2).
 */
public class MethodProgram {
  static final int ROUNDS = 3000;
  static final int THROWS = 3;

  static int leaf(int x) {
    return x + 1;
  }

  static int middle(int x) {
    return leaf(x) * 2;
  }

  static final class Worker {
    int work(int x) {
      return middle(x) + 1;
    }
  }

  static int thrower(int x) {
    if (x >= 0) throw new IllegalStateException("jvmpitest");
    return x;
  }

  static volatile long sink;

  public static void main(String[] args) throws Exception {
    Thread caller =
        new Thread("jvmpitest-caller") {
          @Override
          public void run() {
            Worker w = new Worker();
            Agent.hook(9, 0, w);
            long sum = 0;
            for (int i = 0; i < ROUNDS; i++) sum += w.work(i);
            for (int i = 0; i < THROWS; i++) {
              try {
                sum += thrower(i);
              } catch (IllegalStateException expected) {
                sum++;
              }
            }
            sink = sum;
            Agent.hook(2, 0, null);
          }
        };
    caller.start();
    caller.join();
    Facts.fact("FACT", "rounds", ROUNDS, "throws", THROWS);
  }
}
