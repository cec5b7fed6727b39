// SPDX-License-Identifier: Apache-2.0
// The format=a (java.hprof.txt) parser behind StreamReader: line by line, one section at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "period_delta.h"
#include "profiles.h"

namespace profiles {

class TextProfileParser {
 public:
  TextProfileParser(JavaProfile& profile, std::string source, size_t max_line,
                    const PeriodHandler& on_period);
  void feed(std::string_view bytes);
  void finish();
  size_t buffered() const { return partial_.size(); }

 private:
  enum class Section {
    kPrelude,  // header and licence text, up to the line of dashes
    kNone,
    kTrace,
    kCpuSamples,
    kCpuTime,
    kMonitorTime,
    kSites,
    kMonitorDump,
    kHeapDump,
    kPeriod,  // period=: a PERIOD block, parsed whole at its END line
  };
  void line(std::string_view l);
  void top_level(std::string_view l);
  void cost_row(std::string_view l);
  void site_row(std::string_view l);
  void frame(std::string_view l);
  void end_trace();
  [[noreturn]] void fail(const std::string& what) const;

  JavaProfile& profile_;
  std::string source_;
  size_t max_line_;
  std::string partial_;
  uint64_t line_number_ = 0;
  Section section_ = Section::kPrelude;
  Trace trace_;
  CostSection cost_;
  std::vector<Site> sites_;
  uint64_t sites_sample_bytes_ = 0;  // of the SITES section being read
  std::string monitor_dump_;
  std::string period_;
  const PeriodHandler& on_period_;
};

}  // namespace profiles
