// SPDX-License-Identifier: Apache-2.0
// Hands chunks of bytes to a thread of its own that processes them one at a time, in order, while
// the caller goes on. A streamed heap dump's chunks come from the heap walk, which waits while a
// chunk is converted and written; with the conversion and the file write on another CPU the walk
// goes on meanwhile. At most kQueued chunks wait (each a copy), so memory stays bounded. Without
// a thread (none could be started, e.g. on OutOfMemoryError) or room for a copy, a chunk is
// processed on the caller, after what is queued.
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace hprof::agent {

class ChunkWorker {
 public:
  static constexpr size_t kQueued = 2;
  // Larger chunks (a one-buffer dump's whole buffer) are not copied: they run on the caller.
  static constexpr size_t kMaxCopied = size_t{64} << 20;
  using Process = std::function<void(const char* begin, const char* end)>;

  explicit ChunkWorker(Process process) : process_(std::move(process)) {
    try {
      thread_ = std::thread([this] { run(); });
      // Named, so a profile or top of the dumping JVM shows it apart from the thread it was
      // started from (it would inherit that thread's name, e.g. "Signal Dispatch").
      pthread_setname_np(thread_.native_handle(), "HPROF dump");
    } catch (const std::exception&) {
      // No thread: every chunk is processed on the caller.
    }
  }
  ~ChunkWorker() { finish(); }
  ChunkWorker(const ChunkWorker&) = delete;
  ChunkWorker& operator=(const ChunkWorker&) = delete;

  // Processes [begin, end) after the chunks before it; returns once it is copied (or processed).
  void add(const char* begin, const char* end) {
    const size_t size = static_cast<size_t>(end - begin);
    if (thread_.joinable() && size <= kMaxCopied) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return queue_.size() < kQueued; });
      std::vector<char> copy;
      if (!spare_.empty()) {
        copy.swap(spare_.back());
        spare_.pop_back();
      }
      bool copied = false;
      try {
        copy.assign(begin, end);
        copied = true;
      } catch (const std::bad_alloc&) {
      }
      if (copied) {
        queue_.push_back(std::move(copy));
        changed_.notify_all();
        return;
      }
    }
    wait_idle();
    process_(begin, end);
  }

  // Whether processing a chunk on the thread threw (chunks after it are still processed).
  bool failed() {
    std::lock_guard lock(mutex_);
    return failed_;
  }

  // Waits until every chunk added so far has been processed.
  void wait_idle() {
    if (!thread_.joinable()) return;
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }

  // Processes what is queued and ends the thread.
  void finish() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and everything is processed
      std::vector<char> chunk = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      bool ok = true;
      try {
        process_(chunk.data(), chunk.data() + chunk.size());
      } catch (const std::exception&) {
        ok = false;  // e.g. no memory: this chunk is lost, the caller is told (failed())
      }
      lock.lock();
      if (!ok) failed_ = true;
      busy_ = false;
      if (spare_.size() < kQueued) spare_.push_back(std::move(chunk));
      changed_.notify_all();
    }
  }

  Process process_;
  std::mutex mutex_;
  std::condition_variable changed_;  // the queue, busy_ or stopping_ changed
  std::deque<std::vector<char>> queue_;
  std::vector<std::vector<char>> spare_;  // processed chunks' buffers, reused
  bool busy_ = false;
  bool stopping_ = false;
  bool failed_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace hprof::agent
