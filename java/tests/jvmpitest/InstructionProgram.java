// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Runs methods with an if, a tableswitch and a lookupswitch on the thread "jvmpitest-caller" with
 * known arguments, then asks the agent to log its per-method counts (hook 2).
 */
public class InstructionProgram {
  static int branchy(int x) {
    if (x > 5) {
      return x * 2;
    }
    return -x;
  }

  static int dense(int k) {
    switch (k) {
      case 1:
        return 10;
      case 2:
        return 20;
      case 3:
        return 30;
      case 4:
        return 40;
      default:
        return 0;
    }
  }

  static int sparse(int k) {
    switch (k) {
      case 10:
        return 1;
      case 1000:
        return 2;
      case 100000:
        return 3;
      default:
        return 0;
    }
  }

  static volatile int sink;

  public static void main(String[] args) throws Exception {
    Thread caller =
        new Thread("jvmpitest-caller") {
          @Override
          public void run() {
            int s = branchy(10) + branchy(1);
            s += dense(2) + dense(9);
            s += sparse(1000) + sparse(7);
            sink = s;
            Agent.hook(2, 0, null);
          }
        };
    caller.start();
    caller.join();
    Facts.fact("FACT", "sink", sink);
  }
}
