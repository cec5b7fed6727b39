// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * A thread spins inside spin() while the agent enables METHOD_ENTRY, which instruments spin()
 * under it (the thread goes on in the old version of the method), and then starts CPU sampling
 * (hook 3). Main waits until the agent has drained enough samples of the spinner (hook 4), then the
 * agent stops sampling and checks every frame (hook 5).
 */
public class SampledRetransformProgram {
  private static volatile boolean inside;
  private static volatile boolean stop;
  static long sink;

  static void spin() {
    inside = true;
    long x = 1;
    while (!stop) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    sink = x;
  }

  public static void main(String[] args) throws Exception {
    Thread spinner = new Thread(SampledRetransformProgram::spin, "jvmpitest-spinner");
    spinner.start();
    while (!inside) {
      Thread.onSpinWait();
    }
    Facts.fact("FACT", "start_rc", Agent.hook(3, 0, null));
    // The spinner's samples are taken on its CPU time, which it spends in the old spin().
    while (Agent.hook(4, 0, null) < 20) {
      Thread.sleep(10);
    }
    Facts.fact("FACT", "check_rc", Agent.hook(5, 0, null));
    stop = true;
    spinner.join();
  }
}
