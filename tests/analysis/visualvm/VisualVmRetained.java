// SPDX-License-Identifier: Apache-2.0
import java.io.File;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

// Reads a heap dump with VisualVM's heap library (an implementation we did not write) and prints,
// for each class named on the command line, one line per instance:
//   <class> <instance id in hex> <shallow size> <retained size>
// Usage: VisualVmRetained DUMP CLASS...
public class VisualVmRetained {
  public static void main(String[] args) throws Exception {
    if (args.length < 2 || args[0].equals("--help")) {
      System.err.println("usage: VisualVmRetained DUMP CLASS...");
      System.exit(args.length >= 1 && args[0].equals("--help") ? 0 : 2);
    }
    Heap heap = HeapFactory.createHeap(new File(args[0]));
    for (int i = 1; i < args.length; i++) {
      JavaClass c = heap.getJavaClassByName(args[i]);
      if (c == null) {
        System.out.println(args[i] + " missing 0 0");
        continue;
      }
      List<Instance> instances = c.getInstances();
      for (Instance in : instances)
        System.out.println(args[i] + " " + Long.toHexString(in.getInstanceId()) + " "
            + in.getSize() + " " + in.getRetainedSize());
    }
  }
}
