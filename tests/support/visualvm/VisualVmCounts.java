// SPDX-License-Identifier: Apache-2.0
import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

// Reads a heap dump with VisualVM's heap library (a reader we did not write) and prints one line
// per class with at least one instance: "<instances> <class name>", the name last since it may
// hold spaces. With --total it then prints "TOTAL <instances>" from the heap's summary (the dump's
// HEAP SUMMARY record when it has one), so that the library reads that record too.
// Used by the analysis and hprof test suites.
public class VisualVmCounts {
  private static final String USAGE = "usage: VisualVmCounts [--total] DUMP";

  public static void main(String[] args) throws Exception {
    boolean total = false;
    String dump = null;
    for (String arg : args) {
      if (arg.equals("--help")) {
        System.out.println(USAGE);
        return;
      } else if (arg.equals("--total")) {
        total = true;
      } else if (arg.startsWith("-") || dump != null) {
        usageError();
      } else {
        dump = arg;
      }
    }
    if (dump == null) usageError();
    Heap heap = HeapFactory.createHeap(new File(dump));
    for (JavaClass c : heap.getAllClasses()) {
      if (c.getInstancesCount() > 0) System.out.println(c.getInstancesCount() + " " + c.getName());
    }
    if (total) System.out.println("TOTAL " + heap.getSummary().getTotalLiveInstances());
  }

  private static void usageError() {
    System.err.println(USAGE);
    System.exit(2);
  }
}
