// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the heap analyzer: any input must be analysed or rejected with one
// analysis::Error line — never a crash, an out-of-bounds read, a hang or a runaway allocation.
// The input is handed over as a file (a memfd), as jvmprof would open it, and every query runs.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = ::memfd_create("fuzz-dump", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    auto dump = analysis::HeapDump::open(path, {.use_index_file = false});
    (void)dump->summary();
    (void)dump->class_histogram();
    for (const auto& big : dump->biggest_objects(3, 3)) (void)dump->paths_to(big.object.id, 2);
    (void)dump->duplicate_strings(3, 3);
    (void)dump->suspects(0.05);
  } catch (const analysis::Error& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();  // one line
  }
  ::close(fd);
  return 0;
}
