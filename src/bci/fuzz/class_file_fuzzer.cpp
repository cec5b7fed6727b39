// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any input must either be instrumented or rejected with ClassFormatError;
// an accepted class must round-trip byte for byte and its instrumented form must parse again.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "bci.h"
#include "class_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> input(data, size);
  try {
    bci::ClassFile cf = bci::parse_class(input);
    if (bci::write_class(cf) != std::vector<uint8_t>(input.begin(), input.end())) std::abort();
  } catch (const bci::ClassFormatError&) {
    return 0;
  }
  bci::InjectionOptions options;
  options.tracker_class = "T";
  options.class_number = 70000;  // needs an Integer constant
  options.method_entry_exit = true;
  options.entry_with_receiver = true;
  options.object_init = true;
  options.new_arrays = true;
  options.instructions = true;
  bci::InjectionResult r;
  try {
    r = bci::instrument(input, options);
  } catch (const bci::ClassFormatError&) {
    return 0;
  }
  // Our own output must be well-formed: an exception here escapes and is reported as a crash.
  if (r.changed) bci::instrument(r.class_bytes, options);
  return 0;
}
