// SPDX-License-Identifier: Apache-2.0
// Profile store benchmark: simulated JVMs sending a period every 10 s (100 CPU samples/s over a
// fixed pool of realistic Java stacks, plus allocation sites), ingested as fast as the store
// takes them; then merged queries over the last hour and the whole range. Prints the ingest speed
// as a multiple of real time, each query's time, and bytes per JVM-day. `--baseline` writes the
// same periods into a plain SQLite table without the frame and stack dedup (each sample row
// holding its whole stack as text) and answers the same queries from it, for comparison.
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "store.h"
#include "store_backend.h"

namespace {

using Clock = std::chrono::steady_clock;
using profiles::Measure;

// CPU time of the calling thread: the part of a write spent in this process (all of SQLite's
// work; for PostgreSQL only the client's), less disturbed by other work on the machine than the
// wall clock.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Workload {
  int jvms = 10;
  double hours = 1;
  int period_s = 10;
  int samples_per_s = 100;
  int stack_pool = 2000;  // distinct stacks a service's JVMs run through
  int depth = 24;         // frames per stack
  int64_t start_ms = 1'795'780'800'000;
};

// A pool of stacks: depth frames each, drawn from a vocabulary of 800 methods; stacks share
// their roots as real ones do (main, a thread pool, a framework's dispatch).
std::vector<std::vector<std::string>> stack_pool(const Workload& w, std::mt19937_64& rng) {
  std::vector<std::string> methods;
  for (int i = 0; i < 800; ++i)
    methods.push_back("com.example.service.module" + std::to_string(i % 40) + ".Class" +
                      std::to_string(i) + ".method" + std::to_string(i % 7));
  std::vector<std::vector<std::string>> pool;
  for (int s = 0; s < w.stack_pool; ++s) {
    std::vector<std::string> frames = {"java.lang.Thread.run",
                                       "java.util.concurrent.ThreadPoolExecutor$Worker.run",
                                       "com.example.framework.Dispatcher.dispatch"};
    for (int d = 3; d < w.depth; ++d) frames.push_back(methods[rng() % methods.size()]);
    pool.push_back(std::move(frames));
  }
  return pool;
}

// Samples of one period land on a Zipf-like subset of the pool: a few hot stacks, a long tail.
std::map<Measure, std::vector<profiles::Stack>> make_stacks(
    const Workload& w, const std::vector<std::vector<std::string>>& pool, std::mt19937_64& rng) {
  std::map<Measure, std::vector<profiles::Stack>> out;
  std::map<int, uint64_t> counts;
  const int samples = w.samples_per_s * w.period_s;
  for (int i = 0; i < samples; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    counts[static_cast<int>(std::pow(u, 3.0) * w.stack_pool)]++;
  }
  auto& cpu = out[Measure::kCpuSamples];
  for (const auto& [idx, n] : counts) {
    profiles::Stack s;
    s.frames = pool[idx];
    s.weight = n;
    cpu.push_back(std::move(s));
  }
  auto& alloc = out[Measure::kAllocBytes];
  for (int i = 0; i < 20; ++i) {
    profiles::Stack s;
    s.frames = pool[rng() % 200];
    s.frames.push_back(i % 2 ? "byte[]" : "java.lang.String");
    s.weight = 1024 + rng() % 65536;
    alloc.push_back(std::move(s));
  }
  return out;
}

store::JvmIdentity jvm_identity(const Workload& w, int jvm) {
  return {"host" + std::to_string(jvm),
          1000 + jvm,
          "com.example.Main",
          "17.0.15",
          w.start_ms,
          {{"service", "svc" + std::to_string(jvm % 5)}, {"env", "prod"}}};
}

// Periods made once and reused: building a period's stacks from scratch (copying every frame
// name) costs milliseconds, more than storing it, which would make a day of a fleet take hours
// to simulate. Each batch takes the same Period objects (as many as a batch holds, each with its
// own set of stacks), gives them the next JVMs and times, and varies their weights by up to
// +-25 % (never to 0), so that every period's numbers differ while its stacks stay realistic.
class PeriodPool {
 public:
  PeriodPool(const Workload& w, const std::vector<std::vector<std::string>>& pool, size_t slots,
             std::mt19937_64& rng)
      : w_(w) {
    for (int j = 0; j < w.jvms; ++j) jvms_.push_back(jvm_identity(w, j));
    periods_.resize(slots);
    for (auto& p : periods_) {
      p.stacks = make_stacks(w, pool, rng);
      for (const auto& [m, stacks] : p.stacks)
        for (const auto& s : stacks) base_.push_back(s.weight);
    }
  }

  // Periods number `first`, `first` + 1, ... (period n: JVM n % jvms at round n / jvms), as many
  // as there are slots or up to `end` (a shorter last batch drops the slots it does not use);
  // valid until the next call.
  const std::vector<store::Period>& next(int64_t first, int64_t end, std::mt19937_64& rng) {
    const auto n = static_cast<size_t>(std::min<int64_t>(end - first, slots()));
    periods_.resize(n);
    size_t b = 0;
    for (size_t i = 0; i < n; ++i) {
      // Slot i holds a different JVM and round every batch: batches and JVMs are not aligned.
      store::Period& p = periods_[i];
      const int64_t index = first + static_cast<int64_t>(i);
      p.jvm = jvms_[static_cast<size_t>(index % w_.jvms)];
      p.start_ms = w_.start_ms + index / w_.jvms * w_.period_s * 1000;
      p.end_ms = p.start_ms + w_.period_s * 1000;
      for (auto& [m, stacks] : p.stacks)
        for (auto& s : stacks) {
          const uint64_t base = base_[b++];
          const uint64_t spread = base / 4;
          s.weight = spread == 0 ? base : base - spread + rng() % (2 * spread + 1);
        }
    }
    return periods_;
  }
  int64_t slots() const { return static_cast<int64_t>(periods_.size()); }

 private:
  const Workload& w_;
  std::vector<store::JvmIdentity> jvms_;
  std::vector<store::Period> periods_;
  std::vector<uint64_t> base_;
};

int64_t file_bytes(const std::string& path) {
  int64_t total = 0;
  for (const char* suffix : {"", "-wal"}) {
    struct stat st {};
    if (::stat((path + suffix).c_str(), &st) == 0) total += st.st_size;
  }
  return total;
}

// The comparison without dedup: one row per (period, stack) with the stack's frames as text.
struct Baseline {
  sqlite3* db = nullptr;
  sqlite3_stmt* insert = nullptr;
  explicit Baseline(const std::string& path) {
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db,
                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE raw(jvm TEXT, "
                 "start_ms INTEGER, measure INTEGER, stack TEXT, weight INTEGER); CREATE INDEX "
                 "raw_by_time ON raw(start_ms);",
                 nullptr, nullptr, nullptr);
    sqlite3_prepare_v2(db, "INSERT INTO raw VALUES(?1, ?2, ?3, ?4, ?5)", -1, &insert, nullptr);
  }
  ~Baseline() {
    sqlite3_finalize(insert);
    sqlite3_close(db);
  }
  void write(const std::vector<store::Period>& batch) {
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (const auto& p : batch)
      for (const auto& [m, stacks] : p.stacks)
        for (const auto& s : stacks) {
          std::string text;
          for (const auto& f : s.frames) text += (text.empty() ? "" : ";") + f;
          sqlite3_bind_text(insert, 1, p.jvm.host.c_str(), -1, SQLITE_TRANSIENT);
          sqlite3_bind_int64(insert, 2, p.start_ms);
          sqlite3_bind_int(insert, 3, static_cast<int>(m));
          sqlite3_bind_text(insert, 4, text.c_str(), -1, SQLITE_TRANSIENT);
          sqlite3_bind_int64(insert, 5, static_cast<int64_t>(s.weight));
          sqlite3_step(insert);
          sqlite3_reset(insert);
        }
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  }
  size_t query(int64_t from, int64_t to) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT stack, SUM(weight) FROM raw WHERE measure = 0 AND start_ms >= ?1 "
                       "AND start_ms < ?2 GROUP BY stack",
                       -1, &st, nullptr);
    sqlite3_bind_int64(st, 1, from);
    sqlite3_bind_int64(st, 2, to);
    size_t rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) ++rows;
    sqlite3_finalize(st);
    return rows;
  }
};

// "123" -> 123; false for anything else (empty, signs, trailing text, out of range).
bool parse_count(const char* text, int& out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0 || v > 1'000'000) return false;
  out = static_cast<int>(v);
  return true;
}
bool parse_hours(const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && out > 0 && out <= 24 * 366;
}

// Wall time of each query, run twice: the first with the store's caches cold, the second the
// A/A row (the same query again).
struct QueryTimes {
  double first = 0, second = 0;
  size_t stacks = 0;
};

template <class Run>
QueryTimes time_query(Run&& run) {
  QueryTimes t;
  auto start = Clock::now();
  t.stacks = run();
  t.first = seconds_since(start);
  start = Clock::now();
  const size_t again = run();
  t.second = seconds_since(start);
  if (again != t.stacks) {
    std::fprintf(stderr, "store_bench: the same query gave %zu and %zu stacks\n", t.stacks, again);
    std::exit(1);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Workload w;
  std::string location;
  bool baseline = false, plain_merge = true, queries_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--help") {
      std::printf(
          "usage: store_bench --store PATH|URI [--jvms N] [--hours H] [--baseline]\n"
          "                   [--no-plain-merge] [--queries-only]\n"
          "Simulated JVMs (period=10, 100 samples/s) into a profile store, batch by batch from a\n"
          "pool of periods made once (memory stays bounded however long the run); prints\n"
          "ingest speed as a multiple of real time (all JVMs' time together), the merged query\n"
          "over the last hour and over the whole range (each run twice: cold, then again), and\n"
          "bytes per JVM-day.\n"
          "--no-plain-merge leaves out the baseline query (every period's blob merged), which\n"
          "over a large store takes minutes. --queries-only writes nothing: it runs the queries\n"
          "over a store an earlier run with the same --jvms and --hours filled.\n"
          "The ingest figures are printed (and flushed) as soon as the writes end.\n");
      return 0;
    } else if (a == "--store" && v) {
      location = argv[++i];
    } else if (a == "--jvms" && v) {
      if (!parse_count(argv[++i], w.jvms)) {
        std::fprintf(stderr, "store_bench: --jvms wants a whole number > 0, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (a == "--hours" && v) {
      if (!parse_hours(argv[++i], w.hours)) {
        std::fprintf(stderr, "store_bench: --hours wants a number > 0, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (a == "--baseline") {
      baseline = true;
    } else if (a == "--no-plain-merge") {
      plain_merge = false;
    } else if (a == "--queries-only") {
      queries_only = true;
    } else {
      std::fprintf(stderr, "store_bench: unexpected argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (queries_only && baseline) {
    std::fprintf(stderr, "store_bench: --queries-only is for the profile store, not --baseline\n");
    return 2;
  }
  if (location.empty()) {
    std::fprintf(stderr, "store_bench: needs --store PATH|URI (see --help)\n");
    return 2;
  }
  std::mt19937_64 rng(42);
  const auto pool = stack_pool(w, rng);
  const int64_t periods_per_jvm = static_cast<int64_t>(w.hours * 3600 / w.period_s);
  if (periods_per_jvm <= 0) {
    std::fprintf(stderr, "store_bench: --hours is shorter than one period\n");
    return 2;
  }
  const int64_t end_ms = w.start_ms + periods_per_jvm * w.period_s * 1000;
  // The fleet's time: 100 JVMs for an hour are an hour of real time (the target's unit).
  const double data_seconds = static_cast<double>(periods_per_jvm) * w.period_s;
  const double jvm_days = data_seconds * w.jvms / 86400;
  const std::string kind = baseline                             ? "baseline (no dedup, SQLite)"
                           : location.rfind("postgres", 0) == 0 ? "postgresql"
                                                                : "sqlite";
  // The periods in batches of the store writer's size (StoreOptions::batch_periods), made from
  // a pool outside the ingest clock; how long making them took is printed too.
  const size_t batch_size = store::StoreOptions{}.batch_periods;
  double generate = 0;
  const auto pool_start = Clock::now();
  PeriodPool periods(w, pool, queries_only ? 0 : batch_size, rng);
  generate += seconds_since(pool_start);
  const int64_t total_periods = periods_per_jvm * w.jvms;
  auto for_each_batch = [&](auto&& write) {
    for (int64_t first = 0; first < total_periods; first += periods.slots()) {
      const auto t = Clock::now();
      const auto& batch = periods.next(first, total_periods, rng);
      generate += seconds_since(t);
      write(batch);
    }
  };

  double ingest = 0, ingest_cpu = 0;
  QueryTimes q1, qall, plain;
  int64_t bytes = -1;
  if (baseline) {
    Baseline b(location);
    for_each_batch([&](const std::vector<store::Period>& batch) {
      const auto t = Clock::now();
      b.write(batch);
      ingest += seconds_since(t);
    });
    q1 = time_query([&] { return b.query(end_ms - 3'600'000, end_ms); });
    qall = time_query([&] { return b.query(w.start_ms, end_ms); });
    bytes = file_bytes(location);
  } else {
    // The backend the store's writer thread drives, called here directly, so that only its work
    // is timed.
    const bool postgres = location.rfind("postgres", 0) == 0;
    auto db =
        postgres ? store::open_postgres_backend(location) : store::open_sqlite_backend(location);
    if (!queries_only) {
      for_each_batch([&](const std::vector<store::Period>& batch) {
        const auto t = Clock::now();
        const double cpu = thread_cpu_seconds();
        db->write(batch);
        ingest += seconds_since(t);
        ingest_cpu += thread_cpu_seconds() - cpu;
      });
      // Now, so that a long query phase (or a run stopped during it) cannot lose these.
      std::printf(
          "%s ingest: %lld periods in %.1f s = %.1fx real time; writes' CPU in this process "
          "%.1f s (%.3f ms per period); making the periods %.1f s more\n",
          kind.c_str(), static_cast<long long>(total_periods), ingest, data_seconds / ingest,
          ingest_cpu, ingest_cpu * 1000 / total_periods, generate);
      std::fflush(stdout);
    }
    store::Query q;
    q.from_ms = std::max(w.start_ms, end_ms - int64_t{3'600'000});
    q.to_ms = end_ms;
    q1 = time_query([&] { return db->query(q).size(); });
    q.from_ms = w.start_ms;
    qall = time_query([&] { return db->query(q).size(); });
    // The baseline: the same whole range as 30-minute windows, which never hold a whole hour,
    // so every period's blob is read (the plain merge, as before hour_samples), then merged.
    if (plain_merge)
      plain = time_query([&] {
        std::map<std::vector<std::string>, uint64_t> merged;
        store::Query window;
        for (int64_t t = w.start_ms; t < end_ms; t += 1'800'000) {
          window.from_ms = t;
          window.to_ms = std::min(end_ms, t + 1'800'000);
          for (auto& s : db->query(window)) merged[std::move(s.frames)] += s.weight;
        }
        return merged.size();
      });
    if (plain_merge && plain.stacks != qall.stacks) {
      std::fprintf(stderr, "store_bench: whole range %zu stacks, plain merge %zu\n", qall.stacks,
                   plain.stacks);
      return 1;
    }
    if (location.rfind("postgres", 0) != 0) bytes = file_bytes(location);
  }
  char ingest_text[200];
  if (queries_only)
    std::snprintf(ingest_text, sizeof ingest_text, "ingest not run (--queries-only)");
  else
    std::snprintf(ingest_text, sizeof ingest_text,
                  "ingest %.1f s = %.0fx real time (CPU in this process %.1f s; making the "
                  "periods: %.1f s more)",
                  ingest, data_seconds / ingest, ingest_cpu, generate);
  std::printf(
      "| %s | %d JVMs x %.2f h | %lld periods | %s | last hour query %.3f s, again %.3f s (%zu "
      "stacks) | whole range %.3f s, again %.3f s (%zu stacks) | plain merge of the whole range "
      "%s | %s |\n",
      kind.c_str(), w.jvms, w.hours, static_cast<long long>(total_periods), ingest_text, q1.first,
      q1.second, q1.stacks, qall.first, qall.second, qall.stacks,
      plain_merge ? (std::to_string(plain.first).substr(0, 6) + " s, again " +
                     std::to_string(plain.second).substr(0, 6) + " s")
                        .c_str()
                  : "not run (--no-plain-merge)",
      bytes < 0
          ? "size: see pg_database_size"
          : (std::to_string(bytes / jvm_days / 1e6).substr(0, 6) + " MB per JVM-day").c_str());
  return 0;
}
