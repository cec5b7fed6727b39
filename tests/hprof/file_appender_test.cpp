// SPDX-License-Identifier: Apache-2.0
// FileAppender, HPROF's output file: appends of every size and alignment read back whole, large
// ones go around the page cache (their pages are not in it afterwards, where those of ordinary
// writes are), and without direct I/O nothing does.
#include "file_appender.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace hprof::agent {
namespace {

class FileAppenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("hprof_file_appender_test." + std::to_string(getpid()) + "." +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd_, 0) << path_;
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }

  // Bytes that differ from position to position, so a misplaced block shows.
  static std::vector<char> pattern(size_t size, uint32_t seed) {
    std::vector<char> out(size);
    uint32_t x = seed * 2654435761u + 1;
    for (char& c : out) {
      x = x * 1103515245u + 12345u;
      c = static_cast<char>(x >> 24);
    }
    return out;
  }

  std::vector<char> read_back() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // How many of the file's pages in [begin, end) are in the page cache.
  size_t resident_pages(size_t begin, size_t end) const {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    const size_t size = std::filesystem::file_size(path_);
    void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return SIZE_MAX;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in_core((size + page - 1) / page);
    const int rc = mincore(map, size, in_core.data());
    munmap(map, size);
    if (rc != 0) return SIZE_MAX;
    size_t n = 0;
    for (size_t p = begin / page; p < (end + page - 1) / page && p < in_core.size(); ++p)
      n += in_core[p] & 1;
    return n;
  }

  std::string path_;
  int fd_ = -1;
};

// Sizes chosen so appends start and end inside blocks, span the staging buffer, or are exactly
// one stage.
const std::vector<size_t> kSizes = {100,
                                    (size_t{1} << 20) + 123,
                                    7,
                                    FileAppender::kStageBytes * 2 + 1,
                                    3000,
                                    size_t{2} << 20,
                                    FileAppender::kStageBytes,
                                    1,
                                    (size_t{3} << 20) - 5};

TEST_F(FileAppenderTest, AppendsOfEverySizeReadBackWholeAndLargeOnesBypassThePageCache) {
  FileAppender file(fd_, path_, true);
  if (!file.direct()) GTEST_SKIP() << "the file system of " << path_ << " refuses O_DIRECT";
  std::vector<char> expected;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    const std::vector<char> bytes = pattern(kSizes[i], static_cast<uint32_t>(i));
    ASSERT_TRUE(file.append(bytes.data(), bytes.size())) << "append " << i;
    expected.insert(expected.end(), bytes.begin(), bytes.end());
    ASSERT_EQ(lseek(fd_, 0, SEEK_CUR), static_cast<off_t>(expected.size())) << "append " << i;
  }
  EXPECT_TRUE(file.direct());
  size_t large = 0;
  for (size_t s : kSizes) large += s >= FileAppender::kDirectMin ? s : 0;
  // Every large append went around the cache but for its last partial block.
  EXPECT_GE(file.direct_bytes(), large - 5 * FileAppender::kAlign);
  const std::vector<char> got = read_back();
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "the file differs from what was appended";
}

TEST_F(FileAppenderTest, DirectWritesLeaveNoPagesInTheCache) {
  FileAppender file(fd_, path_, true);
  if (!file.direct()) GTEST_SKIP() << "the file system of " << path_ << " refuses O_DIRECT";
  const std::vector<char> small = pattern(10, 1);
  const std::vector<char> big = pattern(size_t{8} << 20, 2);
  ASSERT_TRUE(file.append(small.data(), small.size()));
  ASSERT_TRUE(file.append(big.data(), big.size()));
  // The first block holds the small write and was written again; the last block is partial.
  const size_t resident =
      resident_pages(FileAppender::kAlign, 10 + big.size() - FileAppender::kAlign);
  EXPECT_EQ(resident, 0u) << "pages of a large append are in the page cache";
  EXPECT_EQ(file.direct_bytes(), (10 + big.size()) / FileAppender::kAlign * FileAppender::kAlign);
}

TEST_F(FileAppenderTest, WithoutDirectIoEveryWriteGoesThroughThePageCache) {
  FileAppender file(fd_, path_, false);
  EXPECT_FALSE(file.direct());
  const std::vector<char> big = pattern(size_t{8} << 20, 3);
  ASSERT_TRUE(file.append(big.data(), big.size()));
  EXPECT_EQ(file.direct_bytes(), 0u);
  EXPECT_GT(resident_pages(0, big.size()), big.size() / 4096 / 2)
      << "an ordinary write should leave its pages in the page cache";
  EXPECT_TRUE(read_back() == big);
}

TEST_F(FileAppenderTest, AnUnalignedStartIsLearntFromTheFirstAppend) {
  // Bytes written before the appender took over: the block they are in is not known to it, so
  // the first large append goes through the cache (it covers that block); later ones need not.
  ASSERT_EQ(::write(fd_, "0123456789", 10), 10);
  FileAppender file(fd_, path_, true);
  if (!file.direct()) GTEST_SKIP() << "the file system of " << path_ << " refuses O_DIRECT";
  const std::vector<char> a = pattern(size_t{2} << 20, 4);
  const std::vector<char> b = pattern(size_t{2} << 20, 5);
  ASSERT_TRUE(file.append(a.data(), a.size()));
  EXPECT_EQ(file.direct_bytes(), 0u);
  ASSERT_TRUE(file.append(b.data(), b.size()));
  EXPECT_GT(file.direct_bytes(), 0u);
  std::vector<char> expected(10);
  std::memcpy(expected.data(), "0123456789", 10);
  expected.insert(expected.end(), a.begin(), a.end());
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_TRUE(read_back() == expected);
}

TEST_F(FileAppenderTest, APipeIsWrittenPlainly) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  std::vector<char> got;
  {
    FileAppender file(pipe_fds[1], "/nonexistent", true);
    EXPECT_FALSE(file.direct());
    const std::vector<char> bytes = pattern(1000, 6);
    ASSERT_TRUE(file.append(bytes.data(), bytes.size()));
    got.resize(2000);
    const ssize_t n = ::read(pipe_fds[0], got.data(), got.size());
    ASSERT_EQ(n, 1000);
    got.resize(1000);
    EXPECT_TRUE(got == bytes);
  }
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace hprof::agent
