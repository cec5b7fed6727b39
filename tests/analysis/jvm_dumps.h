// SPDX-License-Identifier: Apache-2.0
// Heap dumps of AnalysisHeapProgram (tests/analysis/java) made by the JVM (`jcmd GC.heap_dump`,
// JDK 17 and 25) and by our HPROF (heap=dump,format=b at exit), each made once, by the one test
// that reads it.
#pragma once

#include <string>

namespace analysis_test {

struct JvmDumps {
  bool present = false;   // the JDK exists
  std::string error;      // why the dumps could not be made ("" when they were)
  std::string before;     // dump with the first LEAKS entries
  std::string after;      // dump after one "grow" (GROW more entries)
  std::string histogram;  // `jcmd GC.class_histogram` right after `before`
};

// feature: 17 or 25.
const JvmDumps& jcmd_dumps(int feature);
// The same program under the JVM's default collector (G1), whose dead space JDK 19 and later
// fill with filler arrays: `before` and `histogram` only (`after` is empty).
const JvmDumps& jcmd_g1_dumps(int feature);

struct HprofDump {
  std::string path;
  std::string error;
};
const HprofDump& hprof_dump();
// The same program's dump in HPROF's text format (heap=dump,format=a).
const HprofDump& hprof_text_dump();
// The same with HPROF in JDK `feature` (17 or 25; the JDK must exist), made apart from the one
// above for the test that compares instance counts with VisualVM's.
const HprofDump& hprof_text_dump(int feature);

}  // namespace analysis_test
