// SPDX-License-Identifier: Apache-2.0
#include "history_recorder.h"

#include <chrono>
#include <cstdio>

namespace jvmprof {

HistoryRecorder::HistoryRecorder(std::unique_ptr<store::ProfileStore> store,
                                 store::RetentionPolicy policy, int64_t maintenance_interval_ms)
    : store_(std::move(store)), policy_(policy), interval_ms_(maintenance_interval_ms) {
  maintainer_ = std::thread([this] { maintain_loop(); });
}

HistoryRecorder::~HistoryRecorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  maintainer_.join();
  store_->flush();  // what was queued is committed before the store closes
}

bool HistoryRecorder::record(const store::JvmIdentity& jvm, int64_t start_ms, int64_t end_ms,
                             const profiles::JavaProfile& delta) {
  return store_->append(store::period_from_profile(jvm, start_ms, end_ms, delta));
}

store::MaintenanceResult HistoryRecorder::last_maintenance(std::string* error) const {
  std::lock_guard lock(mu_);
  if (error != nullptr) *error = last_error_;
  return last_;
}

void HistoryRecorder::maintain_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    store::MaintenanceResult r;
    std::string error;
    try {
      r = store_->maintain(policy_, profiles::wall_clock_ms());
    } catch (const store::StoreError& e) {
      error = e.what();
      std::fprintf(stderr, "jvmprof serve: profile history maintenance failed: %s\n", e.what());
    }
    lock.lock();
    last_ = r;
    last_error_ = error;
    wake_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [&] { return stopping_; });
  }
}

}  // namespace jvmprof
