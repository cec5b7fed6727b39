// SPDX-License-Identifier: Apache-2.0
// serve's profile history: takes each period a JVM sends (its identity, the period's time range,
// what the period added as a profile) into a profile store, and keeps the store within its
// retention and downsampling policy. Each JVM's connections are recorded too, when they begin
// and when they end (jvm_connections.h), so that a restarted serve shows a JVM's earlier
// connections. Recording never waits for the database (the store's bounded queue drops whole
// periods and connection records when it is full, counted in stats()).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "jvm_connections.h"
#include "profiles.h"
#include "store.h"

namespace jvmprof {

class HistoryRecorder {
 public:
  // Runs the policy at once and then every `maintenance_interval_ms`.
  HistoryRecorder(std::unique_ptr<store::ProfileStore> store, store::RetentionPolicy policy,
                  int64_t maintenance_interval_ms = 3'600'000);
  ~HistoryRecorder();
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  // The hook the receiver calls once per period; false when the period was dropped.
  bool record(const store::JvmIdentity& jvm, int64_t start_ms, int64_t end_ms,
              const profiles::JavaProfile& delta);
  // The hook the receiver calls when a connection begins (record.ended_ms 0) and ends; false
  // when the record was dropped.
  bool record_connection(const store::JvmIdentity& jvm, const ConnectionRecord& record);
  // Who this serve is in the store's connection rows: "HOST pid PID".
  const std::string& collector() const { return collector_; }
  store::StoreStats stats() const { return store_->stats(); }
  store::ProfileStore& store() { return *store_; }
  // The last maintenance's result and error ("" when it went well).
  store::MaintenanceResult last_maintenance(std::string* error = nullptr) const;

 private:
  void maintain_loop();

  std::unique_ptr<store::ProfileStore> store_;
  std::string collector_;
  store::RetentionPolicy policy_;
  int64_t interval_ms_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  store::MaintenanceResult last_;
  std::string last_error_;
  std::thread maintainer_;
};

}  // namespace jvmprof
