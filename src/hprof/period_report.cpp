// SPDX-License-Identifier: Apache-2.0
#include "period_report.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include "identity.h"
#include "profile.h"
#include "reports.h"
#include "text_report.h"

namespace hprof::agent {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class PeriodWriter {
 public:
  bool start() {
    Profile& p = profile();
    const Options& o = p.options;
    sections_ = {o.cpu_samples(), o.cpu == CpuMode::kTimes, o.alloc_sites, o.monitor};
    start_ms_ = wall_ms();
    p.threads.begin_period();
    if (sections_.cpu_samples) p.cpu_samples.track_changes();
    if (sections_.sites) p.sites.track_changes();
    // A front end that goes away is reconnected; the new stream gets a hello.
    if (o.net()) {
      p.output.enable_reconnect([this] {
        {
          std::lock_guard lock(mutex_);
          hello_ = true;
        }
        wake_.notify_all();
      });
    }
    try {
      thread_ = std::thread([this] { run(); });
      pthread_setname_np(thread_.native_handle(), "HPROF period");
    } catch (const std::system_error&) {
      return false;
    }
    return true;
  }

  void finish() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    // A connection made just before the exit still gets its hello, so that the last period and
    // the reports at exit reach it.
    write_hello();
    write();
  }

 private:
  // A thread of its own rather than a JVMPI system thread: it makes no JNI calls, and at exit
  // it is joined before the last period, so that period is the last word.
  void run() {
    const auto period = std::chrono::seconds(profile().options.period_seconds);
    auto next = std::chrono::steady_clock::now() + period;
    std::unique_lock lock(mutex_);
    for (;;) {
      if (wake_.wait_until(lock, next, [this] { return stopping_ || hello_; })) {
        if (stopping_) return;
        hello_ = false;
        lock.unlock();
        write_hello();
        lock.lock();
        continue;
      }
      lock.unlock();
      write();
      lock.lock();
      next += period;
      // A period that took longer than its length (a stalled front end): start afresh from now.
      if (next < std::chrono::steady_clock::now()) next = std::chrono::steady_clock::now() + period;
    }
  }

  PeriodSnapshot snapshot() {
    Profile& p = profile();
    PeriodSnapshot s;
    if (sections_.cpu_samples) {
      // The rows changed since the last period only: a period's work follows what it adds, not
      // the size of the profile. After a reset (CONTROL or DATA_RESET) every row counts anew.
      uint64_t clears = 0;
      for (const Cost& c : p.cpu_samples.take_changed(clears)) s.cpu[c.trace] = c;
      if (clears != cpu_clears_) last_.cpu.clear();
      cpu_clears_ = clears;
    } else if (sections_.cpu_times) {
      for (const Cost& c : p.timer.costs(false)) s.cpu[c.trace] = c;
    }
    if (sections_.sites) {
      for (auto& [index, site] : p.sites.take_changed()) s.sites.emplace(index, site);
    }
    if (sections_.monitors) {
      for (const MonitorProfile::Row& r : p.monitors.rows())
        s.monitors[{r.trace, r.monitor_class}] = {r.count, r.time_ns};
    }
    return s;
  }

  // A new connection's first bytes: the header, the identity with the connection's number, and
  // every trace so far (the periods to come name them), so the new stream stands alone; format=b
  // also every name, class and frame record those refer to (BinaryReport::hello).
  void write_hello() {
    Profile& p = profile();
    std::lock_guard section(p.output.section_mutex());
    Output::HelloScope hello(p.output);
    if (!hello.active()) return;
    if (p.options.binary) {
      p.binary.hello(
          p.classes, p.traces, p.threads.alive_since_last_period(),
          remembered_identity() + " connection=" + std::to_string(p.output.connections()), hello);
      p.binary.flush();
      hello.done();
      return;
    }
    p.output.write(text::header());
    if (!remembered_identity().empty()) {
      p.output.write(remembered_identity() +
                     " connection=" + std::to_string(p.output.connections()) + "\n");
    }
    // The threads the periods to come may name, so that none is unknown on this connection
    // (cpu=old writes no thread events at all).
    if (p.options.cpu != CpuMode::kOld) {
      for (const ThreadInfo& t : p.threads.alive_since_last_period())
        p.output.write(text::thread_start(t.serial, t.object, t.name, t.group));
    }
    p.traces.mark_all_unwritten();
    write_pending_traces();
    hello.done();
  }

  // One period, from the last one's end to now. Only this thread writes periods until finish()
  // has joined it, and then only finish().
  void write() {
    Profile& p = profile();
    std::lock_guard section(p.output.section_mutex());
    // While the front end is away nothing is written and the counters stay where the last period
    // left them: the first period after the reconnect covers the outage.
    if (p.output.failed() || (p.options.net() && !p.output.link_up())) return;
    // The counters are taken before the traces are written, so no row names a trace not sent.
    // Threads that end from here on may have samples in the next period: a hello before it
    // replays them (ThreadTable::alive_since_last_period).
    p.threads.begin_period();
    PeriodSnapshot now = snapshot();
    const int64_t end_ms = wall_ms();
    write_pending_traces();
    const std::string block =
        period_block(++seq_, start_ms_, end_ms, sections_, last_, now,
                     [&p](const SiteKey& key) { return text::site_class_name(p.classes, key); });
    if (p.options.binary) {
      p.binary.note(BinaryReport::kPeriodNoteId, block);
      p.binary.flush();
    } else {
      p.output.write(block);
      p.output.flush();
    }
    if (sections_.cpu_samples) {
      for (const auto& [trace, cost] : now.cpu) last_.cpu[trace] = cost;
    } else {
      last_.cpu = std::move(now.cpu);  // cpu=times: read whole
    }
    for (auto& [index, site] : now.sites) last_.sites[index] = site;
    last_.monitors = std::move(now.monitors);
    start_ms_ = end_ms;
  }

  PeriodSections sections_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool hello_ = false;  // a new connection waits for its hello
  std::thread thread_;
  uint64_t seq_ = 0;
  int64_t start_ms_ = 0;
  PeriodSnapshot last_;      // every CPU row and site reported so far; the monitors as last read
  uint64_t cpu_clears_ = 0;  // CostTable::take_changed's clears at the last period
};

PeriodWriter* g_writer = nullptr;  // never destroyed: the VM may still run other threads

}  // namespace

bool start_periods() {
  if (profile().options.period_seconds <= 0) return true;
  g_writer = new PeriodWriter();
  return g_writer->start();
}

void finish_periods() {
  if (g_writer != nullptr) g_writer->finish();
}

}  // namespace hprof::agent
