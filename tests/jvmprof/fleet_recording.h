// SPDX-License-Identifier: Apache-2.0
// A stream a real HPROF agent sent under format=a,net=,period= (docs/hprof-text-format.md),
// recorded byte for byte, cut where a replay needs it: the hello (the header, the IDENTITY line,
// THREAD STARTs and TRACEs, everything before the first PERIOD block) and each period (the
// records that came after the period before it, then its block). What follows the last complete
// block (the reports HPROF writes at exit) is not replayed: a replayed agent stays connected.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fleet {

struct RecordedPeriod {
  std::string records;  // what the agent sent between the previous block and this one
  std::string seq;      // the block's seq=, as recorded
  std::string body;     // the block after its BEGIN line, through its END line
};

struct Recording {
  std::string head;                                           // the hello before IDENTITY
  std::vector<std::pair<std::string, std::string>> identity;  // IDENTITY's key=value words
  std::string rest_of_hello;                                  // the hello after IDENTITY
  std::vector<RecordedPeriod> periods;
};

// Reads a recorded stream; false with the reason when the file is not one (unreadable, not
// HPROF's text format, no IDENTITY line in its hello, a malformed PERIOD BEGIN line).
bool read_recording(const std::string& path, Recording& out, std::string& why);

// The recording's hello with the IDENTITY words of `own` in place of the recorded ones (appended
// when the recording has none); every other word (vm=, connection=) as recorded.
std::string replay_hello(const Recording& r,
                         const std::vector<std::pair<std::string, std::string>>& own);

// Period k (0-based): its records, then its block with start= and end= those given (the replay's
// clock: the recording's times would place it in the past).
std::string replay_period(const Recording& r, size_t k, int64_t start_ms, int64_t end_ms);

}  // namespace fleet
