// SPDX-License-Identifier: Apache-2.0
// Builds a known object graph, then dumps its own heap with HotSpotDiagnosticMXBean.dumpHeap
// (the same writer as `jcmd <pid> GC.heap_dump`). The formats tests read the dump back.
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

public class FormatsHeapDumpProgram {
  static final int COUNT = 1234;

  static class Base {
    int baseValue;
    String baseName;
  }

  static class Subject extends Base {
    int index;
    long big;
    double ratio;
    float fraction;
    boolean flag;
    char letter;
    byte small;
    short medium;
    String label;
    Subject next;
  }

  static Subject[] subjects;
  static String latin1 = new String("gr\u00fc\u00dfe aus K\u00f6ln");
  static String unicode = new String("h\u00e9llo w\u00f6rld \u2713 \ud83d\ude00");
  static int[] numbers = {3, 1, 4, 1, 5, 9, 2, 6};
  static int answer = 42;

  public static void main(String[] args) throws Exception {
    subjects = new Subject[COUNT];
    for (int i = 0; i < COUNT; i++) {
      Subject s = new Subject();
      s.index = i;
      s.big = i * 1_000_000_007L;
      s.ratio = i * 0.5;
      s.fraction = i * 0.25f;
      s.flag = i % 2 == 0;
      s.letter = (char) ('A' + i % 26);
      s.small = (byte) -i;
      s.medium = (short) (i * 7);
      s.label = "subject-" + i;
      s.baseValue = 12345 + i;
      s.baseName = "base";
      subjects[i] = s;
    }
    for (int i = 0; i + 1 < COUNT; i++) subjects[i].next = subjects[i + 1];
    HotSpotDiagnosticMXBean bean =
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    bean.dumpHeap(args[0], true);
    System.out.println(subjects.length + " " + latin1.length() + " " + unicode.length());
  }
}
