// SPDX-License-Identifier: Apache-2.0
// ChunkWorker: chunks are processed once each, in the order they were added, from copies (the
// caller may reuse its buffer as soon as add returns); wait_idle means every chunk added before
// it is done; an exception on the thread is reported by failed() and later chunks still run.
#include "chunk_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace hprof::agent {
namespace {

TEST(ChunkWorker, ProcessesCopiesInOrderAndWaitIdleMeansDone) {
  std::vector<std::string> seen;  // written by the worker only until wait_idle returns
  ChunkWorker worker([&](const char* begin, const char* end) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // slower than the producer
    seen.emplace_back(begin, end);
  });
  std::string buffer;
  for (int i = 0; i < 200; ++i) {
    buffer = "chunk " + std::to_string(i);
    worker.add(buffer.data(), buffer.data() + buffer.size());
    buffer.assign(buffer.size(), 'x');  // the caller's buffer is reused at once
  }
  worker.wait_idle();
  ASSERT_EQ(seen.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[i], "chunk " + std::to_string(i));
  EXPECT_FALSE(worker.failed());
}

TEST(ChunkWorker, ChunksTooLargeToCopyRunOnTheCallerAfterTheQueue) {
  std::vector<size_t> sizes;
  std::atomic<int> on_caller{0};
  const auto caller = std::this_thread::get_id();
  ChunkWorker worker([&](const char* begin, const char* end) {
    if (std::this_thread::get_id() == caller) ++on_caller;
    sizes.push_back(static_cast<size_t>(end - begin));
  });
  std::vector<char> small(100), large(ChunkWorker::kMaxCopied + 1);
  worker.add(small.data(), small.data() + small.size());
  worker.add(large.data(), large.data() + large.size());
  worker.finish();
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0], small.size());
  EXPECT_EQ(sizes[1], large.size());
  EXPECT_EQ(on_caller, 1);
}

TEST(ChunkWorker, AThrowingChunkIsReportedAndTheRestStillRun) {
  std::vector<char> firsts;
  ChunkWorker worker([&](const char* begin, const char*) {
    if (*begin == 'b') throw std::runtime_error("bad chunk");
    firsts.push_back(*begin);
  });
  for (const char* c : {"a", "b", "c"}) worker.add(c, c + 1);
  worker.finish();
  EXPECT_TRUE(worker.failed());
  EXPECT_EQ(std::string(firsts.begin(), firsts.end()), "ac");
}

}  // namespace
}  // namespace hprof::agent
