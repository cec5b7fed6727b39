// SPDX-License-Identifier: Apache-2.0
package attachbench;

import java.util.Arrays;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

// The javac workload of a long-running JVM: compiles the same source tree ITERATIONS times with the
// JDK's compiler (javax.tools, in this JVM) and prints "ITER i" after each compilation, so that a
// profiler can be attached mid-run, and "DONE" at the end.
//   java attachbench.JavacLoop ITERATIONS JAVAC-ARGUMENTS...
public class JavacLoop {
  public static void main(String[] args) {
    if (args.length < 2) {
      System.err.println("usage: JavacLoop ITERATIONS JAVAC-ARGUMENTS...");
      System.exit(2);
    }
    int iterations = Integer.parseInt(args[0]);
    String[] javacArgs = Arrays.copyOfRange(args, 1, args.length);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    for (int i = 1; i <= iterations; i++) {
      int rc = javac.run(null, null, null, javacArgs);
      if (rc != 0) {
        System.err.println("javac failed: " + rc);
        System.exit(1);
      }
      System.out.println("ITER " + i);
      System.out.flush();
    }
    System.out.println("DONE");
  }
}
