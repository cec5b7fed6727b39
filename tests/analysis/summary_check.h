// SPDX-License-Identifier: Apache-2.0
// A check shared by the synthetic and the JVM dump tests: the saved summary section of a dump's
// index gives the answers walking the index gives.
#pragma once

#include <string>

namespace analysis_test {

// `dump` has a saved index (opened once with the index file). Loads it, walks its sections
// (summarize_index, the section's builder) and expects that equal to the saved summary, and the
// reopened dump's summary() and class_histogram() equal to what the walk gives.
void expect_saved_summary_equals_walked(const std::string& dump);

}  // namespace analysis_test
