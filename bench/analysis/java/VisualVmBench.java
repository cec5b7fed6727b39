// SPDX-License-Identifier: Apache-2.0
import java.io.File;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

// VisualVM's heap library on a dump, timed in phases: open (indexing) to the summary, then the
// retained sizes (the ten biggest objects by retained size, which computes the dominator tree).
// Prints "open_s <s> retained_s <s> objects <n> biggest <retained bytes>".
// Usage: VisualVmBench DUMP
public class VisualVmBench {
  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: VisualVmBench DUMP");
      System.exit(2);
    }
    long start = System.nanoTime();
    Heap heap = HeapFactory.createHeap(new File(args[0]));
    long objects = heap.getSummary().getTotalLiveInstances();
    long opened = System.nanoTime();
    List<Instance> biggest = heap.getBiggestObjectsByRetainedSize(10);
    long retained = System.nanoTime();
    System.out.printf("open_s %.3f retained_s %.3f objects %d biggest %d%n", (opened - start) / 1e9,
        (retained - opened) / 1e9, objects, biggest.isEmpty() ? 0 : biggest.get(0).getRetainedSize());
  }
}
