// SPDX-License-Identifier: Apache-2.0
#include "history_recorder.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace jvmprof {

HistoryRecorder::HistoryRecorder(std::unique_ptr<store::ProfileStore> store,
                                 store::RetentionPolicy policy, int64_t maintenance_interval_ms)
    : store_(std::move(store)), policy_(policy), interval_ms_(maintenance_interval_ms) {
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  collector_ = std::string(host) + " pid " + std::to_string(::getpid());
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

bool HistoryRecorder::record_connection(const store::JvmIdentity& jvm,
                                        const ConnectionRecord& record) {
  store::Connection c;
  c.jvm = jvm;
  c.connection = record.connection;
  c.collector = collector_;
  c.connected_ms = record.connected_ms;
  c.ended_ms = record.ended_ms;
  c.end_cause = record.end_cause;
  c.dropped_events = record.dropped_events;
  c.dropped_bytes = record.dropped_bytes;
  c.bytes = record.bytes;
  c.periods = record.periods_received;
  return store_->record_connection(std::move(c));
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
