// SPDX-License-Identifier: Apache-2.0
// The format=b (java.hprof) side of StreamReader: the formats library's StreamParser with a
// visitor that keeps the names, frames and traces and the report records.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "period_delta.h"
#include "profiles.h"

namespace profiles {

class BinaryProfileParser {
 public:
  BinaryProfileParser(JavaProfile& profile, std::string source, size_t max_record,
                      const PeriodHandler& on_period);
  ~BinaryProfileParser();
  void feed(std::string_view bytes);
  void finish();
  size_t buffered() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profiles
