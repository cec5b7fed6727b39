import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

// Reads a heap dump with VisualVM's heap library (an implementation we did not write) and prints
// one line per class with at least one instance: <instances> <class name>. The name is last
// since it may hold spaces.
// Usage: VisualVmCounts DUMP
public class VisualVmCounts {
  public static void main(String[] args) throws Exception {
    if (args.length != 1 || args[0].equals("--help")) {
      System.err.println("usage: VisualVmCounts DUMP");
      System.exit(args.length == 1 ? 0 : 2);
    }
    Heap heap = HeapFactory.createHeap(new File(args[0]));
    for (JavaClass c : heap.getAllClasses()) {
      if (c.getInstancesCount() > 0) System.out.println(c.getInstancesCount() + " " + c.getName());
    }
  }
}
