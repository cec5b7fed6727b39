// SPDX-License-Identifier: Apache-2.0
#include "test_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

namespace analysis_test {

namespace {

// The directories temp_path made, removed at exit: a test run leaves nothing in /tmp.
class MadeDirectories {
 public:
  void add(const std::string& dir) {
    std::lock_guard lock(mu_);
    dirs_.insert(dir);
  }
  ~MadeDirectories() {
    std::error_code ignored;
    for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ignored);
  }

 private:
  std::mutex mu_;
  std::set<std::string> dirs_;
};

MadeDirectories& made_directories() {
  static MadeDirectories made;
  return made;
}

}  // namespace

std::string temp_path(const std::string& suite, const std::string& name) {
  std::string dir = testing::TempDir() + "analysis-" + suite + "-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  made_directories().add(dir);
  return dir + "/" + name;
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void flip_byte(const std::string& path, uint64_t at) {
  std::vector<char> bytes = read_file(path);
  ASSERT_LT(at, bytes.size());
  bytes[at] = static_cast<char>(bytes[at] ^ 0x5A);
  write_file(path, bytes);
}

}  // namespace analysis_test
