// SPDX-License-Identifier: Apache-2.0
#include "period_report.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <thread>

#include "identity.h"
#include "profile.h"
#include "reports.h"
#include "text_report.h"

namespace hprof::agent {
namespace {

// Growth of a counter; one that went down was reset and counts from zero.
uint64_t growth(uint64_t before, uint64_t now) {
  return now >= before ? now - before : now;
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void append(std::string& out, const char* format, auto... args) {
  char line[256];
  std::snprintf(line, sizeof line, format, args...);
  out += line;
}

}  // namespace

std::string period_block(uint64_t seq, int64_t start_ms, int64_t end_ms,
                         const PeriodSections& sections, const PeriodSnapshot& before,
                         const PeriodSnapshot& now,
                         const std::function<std::string(const SiteKey&)>& site_name) {
  std::string out;
  append(out, "PERIOD BEGIN: seq=%" PRIu64 " start=%" PRId64 " end=%" PRId64 "\n", seq, start_ms,
         end_ms);
  if (sections.cpu_samples || sections.cpu_times) {
    // Largest first, then by trace, so that equal runs give equal blocks.
    std::vector<Cost> rows;
    uint64_t total = 0, total_ns = 0;
    for (const auto& [trace, cost] : now.cpu) {
      const auto it = before.cpu.find(trace);
      const Cost prev = it == before.cpu.end() ? Cost{} : it->second;
      Cost d{trace, growth(prev.count, cost.count), growth(prev.time_ns, cost.time_ns)};
      if (d.count == 0 && d.time_ns == 0) continue;
      total += d.count;
      total_ns += d.time_ns;
      rows.push_back(d);
    }
    std::sort(rows.begin(), rows.end(), [&](const Cost& a, const Cost& b) {
      const uint64_t ka = sections.cpu_times ? a.time_ns : a.count;
      const uint64_t kb = sections.cpu_times ? b.time_ns : b.count;
      return ka != kb ? ka > kb : a.trace < b.trace;
    });
    if (sections.cpu_samples) {
      append(out, "CPU SAMPLES: total=%" PRIu64 " rows=%zu\n", total, rows.size());
      for (const Cost& c : rows) append(out, "%u %" PRIu64 "\n", c.trace, c.count);
    } else {
      append(out, "CPU TIME: total_ns=%" PRIu64 " rows=%zu\n", total_ns, rows.size());
      for (const Cost& c : rows)
        append(out, "%u %" PRIu64 " %" PRIu64 "\n", c.trace, c.count, c.time_ns);
    }
  }
  if (sections.sites) {
    std::string rows;
    size_t count = 0;
    for (size_t i = 0; i < now.sites.size(); ++i) {
      const SiteCounts& c = now.sites[i].counts;
      const SiteCounts prev = i < before.sites.size() ? before.sites[i].counts : SiteCounts{};
      const uint64_t bytes = growth(prev.alloc_bytes, c.alloc_bytes);
      const uint64_t objects = growth(prev.alloc_objects, c.alloc_objects);
      if (bytes == 0 && objects == 0 && c.live_bytes == prev.live_bytes &&
          c.live_objects == prev.live_objects)
        continue;
      ++count;
      append(rows, "%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " ", now.sites[i].key.trace,
             bytes, objects, c.live_bytes, c.live_objects);
      rows += site_name(now.sites[i].key);
      rows += '\n';
    }
    append(out, "SITES: rows=%zu\n", count);
    out += rows;
  }
  if (sections.monitors) {
    std::string rows;
    size_t count = 0;
    uint64_t total_ns = 0;
    for (const auto& [key, cost] : now.monitors) {
      const auto it = before.monitors.find(key);
      const auto prev = it == before.monitors.end() ? std::pair<uint64_t, uint64_t>{} : it->second;
      const uint64_t n = growth(prev.first, cost.first);
      const uint64_t ns = growth(prev.second, cost.second);
      if (n == 0 && ns == 0) continue;
      ++count;
      total_ns += ns;
      append(rows, "%u %" PRIu64 " %" PRIu64 " ", key.first, n, ns);
      rows += key.second;
      rows += '\n';
    }
    append(out, "MONITOR TIME: total_ns=%" PRIu64 " rows=%zu\n", total_ns, count);
    out += rows;
  }
  append(out, "PERIOD END: seq=%" PRIu64 "\n", seq);
  return out;
}

namespace {

class PeriodWriter {
 public:
  bool start() {
    Profile& p = profile();
    const Options& o = p.options;
    sections_ = {o.cpu_samples(), o.cpu == CpuMode::kTimes, o.alloc_sites, o.monitor};
    start_ms_ = wall_ms();
    p.threads.begin_period();
    if (sections_.cpu_samples) p.cpu_samples.track_changes();
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
    if (sections_.sites) s.sites = p.sites.sites();
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
    last_.sites = std::move(now.sites);
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
  PeriodSnapshot last_;      // every CPU row reported so far; the sites and monitors as last read
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
