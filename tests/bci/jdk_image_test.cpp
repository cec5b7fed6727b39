// SPDX-License-Identifier: Apache-2.0
// Whole runtime images: every class of JDK 17 (and JDK 25 when installed) must round-trip byte
// for byte, and, instrumented with every hook, must load and pass HotSpot's verifier.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>

#include "bci_tree.h"
#include "test_support.h"

namespace bcitest {
namespace {

constexpr const char* kSweepTracker = "java/lang/BciSweepTracker";

// The instrumented image is large and written once: RAM-backed /dev/shm when there is one.
fs::path scratch_dir() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec) && access("/dev/shm", W_OK) == 0) {
    return fs::path("/dev/shm") / ("bci-tests-" + std::to_string(getuid()));
  }
  return build_dir() / "tests/bci";
}

void round_trip(const Jdk& jdk) {
  if (!jdk.present()) GTEST_SKIP() << jdk.name << " not installed at " << jdk.home << ": skipped";
  ASSERT_TRUE(fs::exists(jdk.image_dir())) << "bci.extract_" << jdk.name << " did not run";
  RoundTripStats stats = round_trip_tree(jdk.image_dir());
  std::cout << jdk.name << ": round trip of " << stats.classes << " classes ("
            << stats.methods_with_code << " methods with code, " << stats.stack_maps
            << " stack maps): " << stats.mismatches << " mismatches, " << stats.errors
            << " errors\n";
  for (const auto& m : stats.messages) std::cout << "  " << m << "\n";
  EXPECT_GT(stats.classes, 20000u);
  EXPECT_EQ(stats.mismatches, 0u);
  EXPECT_EQ(stats.errors, 0u);
}

void verify_sweep(const Jdk& jdk) {
  if (!jdk.present()) GTEST_SKIP() << jdk.name << " not installed at " << jdk.home << ": skipped";
  ASSERT_TRUE(fs::exists(jdk.image_dir())) << "bci.extract_" << jdk.name << " did not run";
  const fs::path work = build_dir() / "tests/bci";
  const fs::path out = scratch_dir() / (jdk.name + "-instrumented");
  const fs::path index = work / (jdk.name + "-instrumented.index");
  fs::remove_all(out);

  auto started = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  InstrumentStats stats = instrument_tree(jdk.image_dir(), out, all_hooks(kSweepTracker, 0), index);
  std::cout << jdk.name << ": instrumentation took " << seconds() << " s\n";
  std::cout << jdk.name << ": instrumented " << stats.classes << " classes (" << stats.changed
            << " changed, " << stats.methods_instrumented << " methods, "
            << stats.methods_without_instruction_hooks
            << " without instruction hooks to stay under 64 KiB), " << stats.errors << " errors\n";
  for (const auto& m : stats.messages) std::cout << "  " << m << "\n";
  ASSERT_EQ(stats.errors, 0u);
  // The tracker lives in java.base so that instrumented code can call it from the first bytecode
  // the VM runs.
  write_file(out / "java.base" / (std::string(kSweepTracker) + ".class"),
             stub_tracker_class(kSweepTracker));

  const fs::path args = work / (jdk.name + "-sweep.args");
  {
    std::ofstream a(args);
    a << "-Xshare:off\n-XX:+UnlockDiagnosticVMOptions\n-XX:+BytecodeVerificationLocal\n"
      << "-XX:+BytecodeVerificationRemote\n--add-modules\nALL-SYSTEM\n";
    for (const auto& module : fs::directory_iterator(out)) {
      a << "--patch-module\n"
        << module.path().filename().string() << "=" << module.path().string() << "\n";
    }
    a << "-cp\n"
      << java_classes_dir().string() << "\nbcitest.VerifySweep\n"
      << index.string() << "\n";
  }
  CommandResult r = run_command(jdk.java() + " @" + args.string(), 240);
  std::cout << jdk.name << ": verification run done at " << seconds() << " s\n";
  std::smatch m;
  static const std::regex summary(
      "SUMMARY checked=(\\d+) verify_errors=(\\d+) format_errors=(\\d+) other_errors=(\\d+)");
  ASSERT_TRUE(std::regex_search(r.output, m, summary)) << "exit " << r.exit_code << "\n"
                                                       << r.output.substr(0, 20000);
  size_t checked = std::stoul(m[1]), verify_errors = std::stoul(m[2]),
         format_errors = std::stoul(m[3]), other_errors = std::stoul(m[4]);
  std::cout << jdk.name << ": verified " << checked << " instrumented classes on " << jdk.name
            << " with -XX:+BytecodeVerificationLocal: " << verify_errors << " VerifyError, "
            << format_errors << " ClassFormatError, " << other_errors
            << " other linkage errors (not verification)\n";
  if (verify_errors + format_errors + other_errors > 0) std::cout << r.output.substr(0, 20000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(checked, stats.classes);
  EXPECT_EQ(verify_errors, 0u);
  EXPECT_EQ(format_errors, 0u);
  ::testing::Test::RecordProperty("classes_checked", static_cast<int>(checked));
  ::testing::Test::RecordProperty("verify_failures",
                                  static_cast<int>(verify_errors + format_errors));
  if (::testing::Test::HasFailure()) {
    std::cout << "instrumented classes kept in " << out << "\n";
  } else {
    fs::remove_all(out);  // a few hundred MB
  }
}

TEST(JdkImage, RoundTripJdk17) {
  round_trip(jdk17());
}
TEST(JdkImage, RoundTripJdk25) {
  round_trip(jdk25());
}
TEST(JdkImage, InstrumentAndVerifyJdk17) {
  verify_sweep(jdk17());
}
TEST(JdkImage, InstrumentAndVerifyJdk25) {
  verify_sweep(jdk25());
}

}  // namespace
}  // namespace bcitest
