// SPDX-License-Identifier: Apache-2.0
// Shared fixture of the heap tests: the JDKs to run on, a fresh output directory per test, running
// a Java program of java/heap-tests under libjvmpi.so with one of this directory's agents, and the
// FACT lines the programs print.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "launcher.h"

namespace jvmpiheap {

struct Jdk {
  std::string name;  // "jdk17", "jdk25"
  std::string home;
};

std::vector<Jdk> all_jdks();
void PrintTo(const Jdk& jdk, std::ostream* os);
std::string jdk_param_name(const testing::TestParamInfo<Jdk>& info);

// Paths of the built pieces.
std::string agent_path(const std::string& agent);  // libjvmpiheap_<agent>.so
std::string native_lib_path();                     // libjvmpiheap_native.so
std::string test_classes_dir();

// "FACT key=value" lines of a program's stdout; a key may repeat.
class Facts {
 public:
  explicit Facts(const std::string& out);
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  std::string get(const std::string& key) const;  // the first value, "" when missing
  long long num(const std::string& key) const;    // decimal or 0x hex; -1 when missing
  std::vector<std::string> all(const std::string& key) const;

 private:
  std::multimap<std::string, std::string> values_;
};

class HeapTest : public testing::TestWithParam<Jdk> {
 protected:
  void SetUp() override;
  void TearDown() override;

  const Jdk& jdk() const { return GetParam(); }
  // A fresh directory for this test's files (agent output, dumps).
  const std::string& out_dir() const { return out_dir_; }

  // Runs `java -agentpath:libjvmpi.so=<agent>[:<options>] ... <main> <args>`. The agent's options
  // always include out=<out_dir>. System properties jvmpiheap.agent (the agent library) and
  // jvmpiheap.native (the JNI helper library) tell the program what to System.load.
  LaunchResult run_java(const std::string& agent, const std::string& agent_options,
                        const std::string& main_class, const std::vector<std::string>& args = {},
                        const std::vector<std::string>& jvm_options = {}, int timeout_seconds = 60);

  // Asserts a normal exit and prints stdout/stderr when not.
  static void expect_clean_exit(const LaunchResult& r);

 private:
  std::string out_dir_;
};

// Hex or decimal number parse ("0x1f", "31"); 0 on failure.
unsigned long long parse_number(const std::string& s);

}  // namespace jvmpiheap
