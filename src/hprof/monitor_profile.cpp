// SPDX-License-Identifier: Apache-2.0
#include "monitor_profile.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>

#include "text_report.h"

namespace hprof::agent {
namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// Reads the monitor dump buffer (big-endian integers, native pointers).
class DumpReader {
 public:
  DumpReader(const char* p, const char* end) : p_(p), end_(end) {}
  bool more() const { return p_ < end_; }
  bool ok() const { return ok_; }
  uint8_t u1() {
    if (!need(1)) return 0;
    return static_cast<uint8_t>(*p_++);
  }
  uint32_t u4() {
    if (!need(4)) return 0;
    uint32_t v;
    std::memcpy(&v, p_, 4);
    p_ += 4;
    return ntohl(v);
  }
  void* ptr() {
    void* v = nullptr;
    if (!need(sizeof v)) return nullptr;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }

 private:
  bool need(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      p_ = end_;
      return false;
    }
    return true;
  }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

struct MonitorState {
  bool raw = false;
  std::string description;  // signature, or raw monitor name
  JNIEnv* owner = nullptr;
  uint32_t entry_count = 0;
  std::vector<JNIEnv*> entering;
  std::vector<JNIEnv*> waiting;
};

std::string status_text(jint status) {
  if (status < 0) return "UN";  // the thread is gone
  std::string s;
  if ((status & JVMPI_THREAD_SUSPENDED) != 0) s += "S|";
  if ((status & JVMPI_THREAD_INTERRUPTED) != 0) s += "intr|";
  switch (status & ~(JVMPI_THREAD_SUSPENDED | JVMPI_THREAD_INTERRUPTED)) {
    case JVMPI_THREAD_RUNNABLE:
      return s + "R";
    case JVMPI_THREAD_MONITOR_WAIT:
      return s + "MW";
    case JVMPI_THREAD_CONDVAR_WAIT:
      return s + "CW";
    default:
      return s + "UN";
  }
}

}  // namespace

std::string monitor_signature(const std::string& class_name) {
  std::string s = class_name;
  for (char& c : s) {
    if (c == '.') c = '/';
  }
  if (s.size() > 2 && s.compare(s.size() - 2, 2, "[]") == 0) {
    int dims = 0;
    while (s.size() > 2 && s.compare(s.size() - 2, 2, "[]") == 0) {
      s.resize(s.size() - 2);
      ++dims;
    }
    static const std::map<std::string, char> kPrimitive{
        {"boolean", 'Z'}, {"byte", 'B'}, {"char", 'C'},  {"short", 'S'},
        {"int", 'I'},     {"long", 'J'}, {"float", 'F'}, {"double", 'D'}};
    auto it = kPrimitive.find(s);
    return std::string(static_cast<size_t>(dims), '[') +
           (it != kPrimitive.end() ? std::string(1, it->second) : "L" + s + ";");
  }
  return "L" + s + ";";
}

namespace {

// When the calling thread began to block (the enter and the entered event come on the blocked
// thread); its JNIEnv tells a later attachment of the same OS thread apart.
struct BlockedSince {
  JNIEnv* env = nullptr;
  uint64_t ns = 0;
};
thread_local BlockedSince t_blocked;

// The calling thread's recently met monitors and their class names.
struct ClassMemo {
  static constexpr size_t kSlots = 64;
  jobjectID object[kSlots] = {};
  std::string name[kSlots];
};
thread_local std::unique_ptr<ClassMemo> t_class_memo;

}  // namespace

void MonitorProfile::on_contended_enter(JNIEnv* env, jobjectID) {
  t_blocked = {env, now_ns()};
}

uint64_t MonitorProfile::on_contended_entered(JNIEnv* env, unsigned trace,
                                              const std::string& monitor_class) {
  const uint64_t now = now_ns();
  if (t_blocked.env != env || env == nullptr) return 0;
  const uint64_t blocked = now - t_blocked.ns;
  t_blocked = {};
  Key key{trace, monitor_class};
  Shard& shard = shards_[KeyHash{}(key) % kShards];
  std::lock_guard lock(shard.mutex);
  Cost& c = shard.costs[std::move(key)];
  c.count += 1;
  c.time_ns += blocked;
  return blocked;
}

const std::string& MonitorProfile::class_of(jobjectID object,
                                            const std::function<std::string(jobjectID)>& name_of) {
  if (!t_class_memo) t_class_memo = std::make_unique<ClassMemo>();
  ClassMemo& memo = *t_class_memo;
  const size_t slot = (reinterpret_cast<uintptr_t>(object) >> 3) % ClassMemo::kSlots;
  if (object == nullptr || memo.object[slot] != object) {
    memo.name[slot] = name_of(object);
    memo.object[slot] = object;
  }
  return memo.name[slot];
}

std::vector<MonitorProfile::Row> MonitorProfile::rows() const {
  std::vector<Row> out;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (const auto& [key, cost] : shard.costs)
      out.push_back({key.trace, key.monitor_class, cost.count, cost.time_ns});
  }
  return out;
}

std::string MonitorProfile::time_section(const TraceTable&, double cutoff) const {
  std::vector<std::pair<Key, Cost>> rows;
  uint64_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (const auto& [key, cost] : shard.costs) {
      rows.emplace_back(key, cost);
      total += cost.time_ns;
    }
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second.time_ns != b.second.time_ns) return a.second.time_ns > b.second.time_ns;
    return a.first.trace < b.first.trace;
  });
  char line[512];
  std::snprintf(line, sizeof line, "MONITOR TIME BEGIN (total = %" PRIu64 " ms) ", total / 1000000);
  std::string out = line + text::now_ctime();
  if (total > 0) out += "rank   self  accum   count trace monitor\n";
  uint64_t accum = 0;
  int rank = 0;
  for (const auto& [key, cost] : rows) {
    if (total == 0) break;
    const double self = 100.0 * static_cast<double>(cost.time_ns) / static_cast<double>(total);
    if (self / 100.0 < cutoff) break;
    accum += cost.time_ns;
    std::snprintf(line, sizeof line, "%4d %5.2f%% %5.2f%% %7" PRIu64 " %5u %s (Java)\n", ++rank,
                  self, 100.0 * static_cast<double>(accum) / static_cast<double>(total), cost.count,
                  key.trace, key.monitor_class.c_str());
    out += line;
  }
  out += "MONITOR TIME END\n";
  return out;
}

std::string monitor_dump_text(const JVMPI_Event& dump, const ThreadTable& threads,
                              const std::function<std::string(jobjectID)>& class_of,
                              const std::function<unsigned(const JVMPI_CallTrace&)>& trace_of) {
  const auto& d = dump.u.monitor_dump;
  std::string out = "MONITOR DUMP BEGIN\n";
  char line[512];
  std::map<JNIEnv*, unsigned> trace_of_thread;
  for (jint i = 0; i < d.num_traces; ++i) {
    const unsigned trace = trace_of(d.traces[i]);
    trace_of_thread[d.traces[i].env_id] = trace;
    std::snprintf(line, sizeof line, "    THREAD %u, trace %u, status: %s\n",
                  threads.serial_of(d.traces[i].env_id), trace,
                  status_text(d.threads_status != nullptr ? d.threads_status[i] : 0).c_str());
    out += line;
  }

  std::vector<MonitorState> monitors;
  DumpReader r(d.begin, d.end);
  while (r.more()) {
    MonitorState m;
    const uint8_t type = r.u1();
    if (type == JVMPI_MONITOR_JAVA) {
      m.description = monitor_signature(class_of(static_cast<jobjectID>(r.ptr())));
    } else if (type == JVMPI_MONITOR_RAW) {
      m.raw = true;
      const char* name = static_cast<const char*>(r.ptr());
      r.ptr();  // the raw monitor's ID
      m.description = name != nullptr ? name : "";
    } else {
      break;
    }
    m.owner = static_cast<JNIEnv*>(r.ptr());
    m.entry_count = r.u4();
    for (uint32_t n = r.u4(), i = 0; i < n && r.ok(); ++i) {
      m.entering.push_back(static_cast<JNIEnv*>(r.ptr()));
    }
    for (uint32_t n = r.u4(), i = 0; i < n && r.ok(); ++i) {
      m.waiting.push_back(static_cast<JNIEnv*>(r.ptr()));
    }
    if (!r.ok()) break;
    monitors.push_back(std::move(m));
  }

  auto thread_list = [&threads](const std::vector<JNIEnv*>& envs) {
    std::string s;
    for (size_t i = 0; i < envs.size(); ++i) {
      const unsigned serial = threads.serial_of(envs[i]);
      s += (i == 0 ? " " : ", ");
      s += serial == kUnknownThreadSerial ? "<unknown thread>" : "thread " + std::to_string(serial);
    }
    return s;
  };
  for (const MonitorState& m : monitors) {
    out += std::string("    ") +
           (m.raw ? "RAW MONITOR \"" + m.description + "\"" : "MONITOR " + m.description);
    if (m.owner == nullptr) {
      out += " unowned\n";
    } else {
      std::snprintf(line, sizeof line, "\n\towner: thread %u, entry count: %u\n",
                    threads.serial_of(m.owner), m.entry_count);
      out += line;
    }
    out += "\twaiting to enter:" + thread_list(m.entering) + "\n";
    out += "\twaiting to be notified:" + thread_list(m.waiting) + "\n";
  }

  // Deadlocks: follow "waits to enter a monitor owned by" from each blocked thread; a walk that
  // comes back to where it started is a cycle. Each cycle is reported once.
  std::map<JNIEnv*, const MonitorState*> blocked_on;
  for (const MonitorState& m : monitors) {
    for (JNIEnv* e : m.entering) blocked_on[e] = &m;
  }
  std::vector<std::vector<JNIEnv*>> cycles;
  for (const auto& [start, unused] : blocked_on) {
    std::vector<JNIEnv*> path{start};
    JNIEnv* t = start;
    for (size_t steps = 0; steps <= blocked_on.size(); ++steps) {
      auto it = blocked_on.find(t);
      if (it == blocked_on.end() || it->second->owner == nullptr) break;
      t = it->second->owner;
      if (t == start) {
        // Report each cycle once: only from its smallest member.
        if (*std::min_element(path.begin(), path.end()) == start) cycles.push_back(path);
        break;
      }
      if (std::find(path.begin(), path.end(), t) != path.end()) break;
      path.push_back(t);
    }
  }
  for (const auto& cycle : cycles) {
    out += "    DEADLOCK among " + std::to_string(cycle.size()) + " threads:\n";
    for (JNIEnv* t : cycle) {
      const MonitorState* m = blocked_on[t];
      std::snprintf(line, sizeof line,
                    "\tthread %u (trace %u) waits to enter %s%s, owned by thread %u\n",
                    threads.serial_of(t), trace_of_thread.count(t) ? trace_of_thread[t] : 0,
                    m->raw ? "raw monitor " : "MONITOR ", m->description.c_str(),
                    threads.serial_of(m->owner));
      out += line;
    }
  }
  out += "MONITOR DUMP END\n";
  return out;
}

}  // namespace hprof::agent
