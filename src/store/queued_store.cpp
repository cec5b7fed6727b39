// SPDX-License-Identifier: Apache-2.0
// The store's write path: append() puts a whole period into a bounded queue or drops it (counted),
// never waiting on the database; one writer thread takes up to batch_periods at a time and commits
// them in one transaction. Queries go to a second connection, so that they read committed data
// while the writer works (SQLite's WAL mode, PostgreSQL's MVCC).
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

#include "store_backend.h"

namespace store {
namespace {

// A task the writer thread runs in order with the periods (flush barriers, maintenance).
using Task = std::function<void(Backend&)>;

class QueuedStore final : public ProfileStore {
 public:
  QueuedStore(const BackendFactory& open, const StoreOptions& options)
      : options_(options), writer_db_(open()), reader_db_(open()) {
    if (options_.batch_periods == 0) options_.batch_periods = 1;
    writer_ = std::thread([this] { run(); });
  }

  ~QueuedStore() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    writer_.join();
  }

  bool append(Period period) override {
    std::lock_guard lock(mu_);
    ++stats_.appended;
    if (queued_periods_ >= options_.queue_periods) {
      ++stats_.dropped;
      return false;
    }
    queue_.emplace_back(std::move(period));
    ++queued_periods_;
    wake_.notify_all();
    return true;
  }

  void flush() override {
    run_task([](Backend&) {});
  }

  bool record_connection(Connection connection) override {
    std::lock_guard lock(mu_);
    if (queued_periods_ >= options_.queue_periods) {
      ++stats_.connections_dropped;
      return false;
    }
    queue_.emplace_back(std::move(connection));
    ++queued_periods_;
    wake_.notify_all();
    return true;
  }

  StoreStats stats() const override {
    std::lock_guard lock(mu_);
    StoreStats s = stats_;
    s.queued = queued_periods_;
    return s;
  }

  std::vector<profiles::Stack> query(const Query& q) override {
    std::lock_guard lock(reader_mu_);
    return reader_db_->query(q);
  }
  std::vector<StoredJvm> jvms() override {
    std::lock_guard lock(reader_mu_);
    return reader_db_->jvms();
  }
  std::vector<Connection> connections(const std::vector<JvmIdentity>& jvms,
                                      size_t per_jvm) override {
    std::lock_guard lock(reader_mu_);
    return reader_db_->connections(jvms, per_jvm);
  }
  std::map<std::string, std::vector<std::string>> labels() override {
    std::lock_guard lock(reader_mu_);
    return reader_db_->labels();
  }
  std::vector<TimelinePoint> timeline(const Query& q, int64_t bucket_ms,
                                      const std::string& group_by_label) override {
    std::lock_guard lock(reader_mu_);
    return reader_db_->timeline(q, bucket_ms, group_by_label);
  }

  std::map<profiles::Measure, std::vector<TimelinePoint>> timelines(
      const Query& q, int64_t bucket_ms, const std::string& group_by_label) override {
    std::lock_guard lock(reader_mu_);
    return reader_db_->timelines(q, bucket_ms, group_by_label);
  }

  MaintenanceResult maintain(const RetentionPolicy& policy, int64_t now_ms) override {
    MaintenanceResult result;
    std::string error;
    run_task([&](Backend& db) {
      try {
        result = db.maintain(policy, now_ms);
      } catch (const StoreError& e) {
        error = e.what();
      }
    });
    if (!error.empty()) throw StoreError(error);
    return result;
  }

  std::string describe() const override { return reader_db_->describe(); }

 private:
  // Queues `task` behind every period queued so far and waits until the writer has run it.
  void run_task(Task task) {
    std::unique_lock lock(mu_);
    bool done = false;
    queue_.emplace_back(Task([&, task](Backend& db) {
      task(db);
      std::lock_guard done_lock(mu_);
      done = true;
      done_.notify_all();
    }));
    wake_.notify_all();
    done_.wait(lock, [&] { return done; });
  }

  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is written
      if (auto* task = std::get_if<Task>(&queue_.front())) {
        Task t = std::move(*task);
        queue_.pop_front();
        lock.unlock();
        t(*writer_db_);
        lock.lock();
        continue;
      }
      if (std::holds_alternative<Connection>(queue_.front())) {
        write_connections(lock);
        continue;
      }
      std::vector<Period> batch;
      while (!queue_.empty() && batch.size() < options_.batch_periods &&
             std::holds_alternative<Period>(queue_.front())) {
        batch.push_back(std::move(std::get<Period>(queue_.front())));
        queue_.pop_front();
      }
      lock.unlock();
      std::string error;
      try {
        writer_db_->write(batch);
      } catch (const StoreError& e) {
        error = e.what();
      }
      lock.lock();
      queued_periods_ -= batch.size();
      if (error.empty()) {
        stats_.committed += batch.size();
      } else {
        stats_.failed += batch.size();
        stats_.last_error = error;
      }
    }
  }

  // The connection records at the queue's front, up to batch_periods, in one transaction.
  void write_connections(std::unique_lock<std::mutex>& lock) {
    std::vector<Connection> batch;
    while (!queue_.empty() && batch.size() < options_.batch_periods &&
           std::holds_alternative<Connection>(queue_.front())) {
      batch.push_back(std::move(std::get<Connection>(queue_.front())));
      queue_.pop_front();
    }
    lock.unlock();
    std::string error;
    try {
      writer_db_->write_connections(batch);
    } catch (const StoreError& e) {
      error = e.what();
    }
    lock.lock();
    queued_periods_ -= batch.size();
    if (!error.empty()) {
      stats_.connections_failed += batch.size();
      stats_.last_error = error;
    }
  }

  StoreOptions options_;
  std::unique_ptr<Backend> writer_db_, reader_db_;
  mutable std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<std::variant<Period, Task, Connection>> queue_;
  size_t queued_periods_ = 0;  // periods and connection records
  bool stopping_ = false;
  StoreStats stats_;
  std::mutex reader_mu_;
  std::thread writer_;
};

}  // namespace

std::unique_ptr<ProfileStore> make_queued_store(const BackendFactory& open,
                                                const StoreOptions& options) {
  return std::make_unique<QueuedStore>(open, options);
}

std::unique_ptr<ProfileStore> open_store(const std::string& location, const StoreOptions& options) {
  if (location.starts_with("postgresql://") || location.starts_with("postgres://"))
    return make_queued_store([location] { return open_postgres_backend(location); }, options);
  return make_queued_store([location] { return open_sqlite_backend(location); }, options);
}

}  // namespace store
