// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

/**
 * Ends normally, with System.exit(3), with an uncaught exception, or waits on stdin for the test to
 * signal it (args[0]: normal, exit3, throw, wait).
 */
public class StartupProgram {
  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "normal";
    Thread worker =
        new Thread("jvmpitest-startup-worker") {
          @Override
          public void run() {}
        };
    worker.start();
    worker.join();
    Facts.fact("FACT", "mode", mode);
    if (mode.equals("wait")) {
      // The test ends the VM with a signal while main is blocked here.
      System.out.println("READY");
      System.out.flush();
      new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
      Facts.fact("FACT", "stdin_closed", true);
    } else if (mode.equals("exit3")) {
      System.exit(3);
    } else if (mode.equals("throw")) {
      throw new IllegalStateException("jvmpitest-uncaught");
    }
  }
}
