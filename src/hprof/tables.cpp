// SPDX-License-Identifier: Apache-2.0
#include "tables.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

namespace hprof::agent {
namespace {
std::atomic<uint64_t> g_trace_tables{0};
}  // namespace

std::string report_class_name(const char* jvmpi_name) {
  std::string s = jvmpi_name != nullptr ? jvmpi_name : "<Unknown Class>";
  int dims = 0;
  while (dims < static_cast<int>(s.size()) && s[dims] == '[') ++dims;
  if (dims == 0) return s;
  std::string element;
  const char kind = dims < static_cast<int>(s.size()) ? s[dims] : 'V';
  switch (kind) {
    case 'Z':
      element = "boolean";
      break;
    case 'B':
      element = "byte";
      break;
    case 'C':
      element = "char";
      break;
    case 'S':
      element = "short";
      break;
    case 'I':
      element = "int";
      break;
    case 'J':
      element = "long";
      break;
    case 'F':
      element = "float";
      break;
    case 'D':
      element = "double";
      break;
    case 'L':
      element = s.substr(dims + 1, s.size() - dims - 2);
      break;
    default:
      element = s.substr(dims);
      break;
  }
  for (char& c : element) {
    if (c == '/') c = '.';
  }
  for (int i = 0; i < dims; ++i) element += "[]";
  return element;
}

ClassInfo ClassTable::on_class_load(const JVMPI_Event& e, bool* is_new, unsigned load_trace) {
  const auto& c = e.u.class_load;
  ClassInfo info;
  info.name = report_class_name(c.class_name);
  info.source = c.source_name != nullptr ? c.source_name : "";
  info.num_interfaces = c.num_interfaces;
  for (jint i = 0; i < c.num_static_fields; ++i) {
    info.statics.push_back({c.statics[i].field_name, c.statics[i].field_signature});
  }
  for (jint i = 0; i < c.num_instance_fields; ++i) {
    info.instances.push_back({c.instances[i].field_name, c.instances[i].field_signature});
  }
  std::lock_guard lock(mutex_);
  auto [it, inserted] = classes_.try_emplace(c.class_id);
  if (is_new != nullptr) *is_new = inserted;
  if (inserted) {
    info.serial = next_serial_++;
    info.load_trace = load_trace;
  } else {
    info.serial = it->second.serial;  // requested again: same class
    info.load_trace = it->second.load_trace;
  }
  it->second = std::move(info);
  for (jint i = 0; i < c.num_methods; ++i) {
    const JVMPI_Method& m = c.methods[i];
    methods_[m.method_id] = {c.class_id, it->second.name, m.method_name, m.method_signature,
                             it->second.source};
  }
  return it->second;
}

unsigned ClassTable::on_class_unload(jobjectID id) {
  std::lock_guard lock(mutex_);
  auto it = classes_.find(id);
  if (it == classes_.end()) return 0;
  it->second.unloaded = true;
  return it->second.serial;
}

ClassInfo ClassTable::find(jobjectID id) const {
  std::lock_guard lock(mutex_);
  auto it = classes_.find(id);
  return it == classes_.end() ? ClassInfo{} : it->second;
}

unsigned ClassTable::serial_of(jobjectID id) const {
  std::lock_guard lock(mutex_);
  auto it = classes_.find(id);
  return it == classes_.end() ? 0 : it->second.serial;
}

std::string ClassTable::name_of(jobjectID id) const {
  std::lock_guard lock(mutex_);
  auto it = classes_.find(id);
  return it == classes_.end() ? "<Unknown Class>" : it->second.name;
}

MethodInfo ClassTable::method(jmethodID id) const {
  std::lock_guard lock(mutex_);
  auto it = methods_.find(id);
  return it == methods_.end() ? MethodInfo{} : it->second;
}

void ClassTable::add_pseudo_method(jmethodID id, const MethodInfo& info) {
  std::lock_guard lock(mutex_);
  methods_[id] = info;
}

std::vector<std::pair<jobjectID, ClassInfo>> ClassTable::all() const {
  std::lock_guard lock(mutex_);
  return {classes_.begin(), classes_.end()};
}

unsigned ThreadTable::on_thread_start(const JVMPI_Event& e) {
  const auto& t = e.u.thread_start;
  std::lock_guard lock(mutex_);
  auto [it, inserted] = threads_.try_emplace(t.thread_env_id);
  // (periods_ is 0 until period= begins its first period: then nothing needs keeping.)
  if (!inserted && !it->second.alive && periods_ != 0 && it->second.ended_in == periods_ &&
      ended_since_period_.size() < kEndedKeptLimit) {
    ended_since_period_.push_back(std::move(it->second));
  }
  if (inserted || !it->second.alive) {
    it->second = ThreadInfo{next_serial_++,
                            t.thread_name ? t.thread_name : "",
                            t.group_name ? t.group_name : "",
                            t.parent_name ? t.parent_name : "",
                            t.thread_id,
                            true};
  }
  return it->second.serial;
}

unsigned ThreadTable::on_thread_end(JNIEnv* env) {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(env);
  if (it == threads_.end()) return 0;
  // Kept, marked ended, until a later thread reuses the env: what the thread still does after its
  // THREAD_END (notifying joiners, say) is charged to it rather than to no thread.
  it->second.alive = false;
  it->second.ended_in = periods_;
  return it->second.serial;
}

void ThreadTable::begin_period() {
  std::lock_guard lock(mutex_);
  ++periods_;
  ended_since_period_.clear();
}

std::vector<ThreadInfo> ThreadTable::alive_since_last_period() const {
  std::vector<ThreadInfo> out;
  {
    std::lock_guard lock(mutex_);
    out = ended_since_period_;
    for (const auto& [env, info] : threads_) {
      if (info.alive || info.ended_in == periods_) out.push_back(info);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ThreadInfo& a, const ThreadInfo& b) { return a.serial < b.serial; });
  return out;
}

unsigned ThreadTable::serial_of(JNIEnv* env) const {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(env);
  return it == threads_.end() ? kUnknownThreadSerial : it->second.serial;
}

ThreadInfo ThreadTable::find(JNIEnv* env) const {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(env);
  return it == threads_.end() ? ThreadInfo{} : it->second;
}

std::vector<std::pair<JNIEnv*, ThreadInfo>> ThreadTable::live() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<JNIEnv*, ThreadInfo>> out;
  for (const auto& entry : threads_) {
    if (entry.second.alive) out.push_back(entry);
  }
  return out;
}

namespace {

// One hash for stored keys and lookup views alike.
struct TraceHasher {
  size_t h;
  explicit TraceHasher(unsigned thread_serial) : h(thread_serial * 0x9e3779b97f4a7c15ULL) {}
  void add(jmethodID method, jint line) {
    h ^= reinterpret_cast<size_t>(method) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= static_cast<size_t>(line) + (h << 6) + (h >> 2);
  }
};

}  // namespace

size_t TraceTable::KeyHash::operator()(const Key& k) const {
  TraceHasher hasher(k.thread_serial);
  for (const Frame& f : k.frames) hasher.add(f.method, f.line);
  return hasher.h;
}

size_t TraceTable::KeyHash::operator()(const KeyView& k) const {
  TraceHasher hasher(k.thread_serial);
  for (int i = 0; i < k.count; ++i) hasher.add(k.frames[i].method_id, k.frames[i].lineno);
  return hasher.h;
}

bool TraceTable::KeyEqual::operator()(const KeyView& a, const Key& b) const {
  if (a.thread_serial != b.thread_serial || static_cast<size_t>(a.count) != b.frames.size()) {
    return false;
  }
  for (int i = 0; i < a.count; ++i) {
    const Frame& f = b.frames[static_cast<size_t>(i)];
    if (a.frames[i].method_id != f.method || a.frames[i].lineno != f.line) return false;
  }
  return true;
}

TraceTable::TraceTable() : id_(g_trace_tables.fetch_add(1) + 1) {
  // The empty trace, which every report refers to for what has no stack, is always there.
  traces_[kEmptyTraceSerial] = TraceInfo{kEmptyTraceSerial, 0, {}, false};
}

namespace {

// Every allocation interns its trace (heap=sites), and a program allocates at a few sites over and
// over: each thread remembers the serials of its recent traces, so a repeated trace costs a hash
// and a comparison of its frames, without the table's lock. Serials never change (the table never
// forgets a trace), so a remembered one stays right.
constexpr int kMemoFrames = 8;  // deeper traces go to the table every time
constexpr size_t kMemoSlots = 64;
struct MemoEntry {
  size_t hash = 0;
  uint64_t table = 0;  // 0: empty
  unsigned serial = 0;
  unsigned thread = 0;
  int count = 0;
  JVMPI_CallFrame frames[kMemoFrames];
};
struct TraceMemo {
  MemoEntry entries[kMemoSlots];
};
thread_local std::unique_ptr<TraceMemo> t_trace_memo;

bool same_frames(const JVMPI_CallFrame* a, const JVMPI_CallFrame* b, int count) {
  for (int i = 0; i < count; ++i) {
    if (a[i].method_id != b[i].method_id || a[i].lineno != b[i].lineno) return false;
  }
  return true;
}

}  // namespace

unsigned TraceTable::intern(const JVMPI_CallFrame* frames, int count, unsigned thread_serial) {
  if (count <= 0 && thread_serial == 0) return kEmptyTraceSerial;
  if (count < 0) count = 0;
  if (count > kMemoFrames) return intern_in_table(frames, count, thread_serial);
  const size_t hash = KeyHash{}(KeyView{thread_serial, frames, count});
  if (!t_trace_memo) t_trace_memo = std::make_unique<TraceMemo>();
  MemoEntry& e = t_trace_memo->entries[(hash ^ (hash >> 17)) % kMemoSlots];
  if (e.table == id_ && e.hash == hash && e.thread == thread_serial && e.count == count &&
      same_frames(e.frames, frames, count)) {
    return e.serial;
  }
  const unsigned serial = intern_in_table(frames, count, thread_serial);
  e.hash = hash;
  e.table = id_;
  e.serial = serial;
  e.thread = thread_serial;
  e.count = count;
  std::copy(frames, frames + count, e.frames);
  return serial;
}

unsigned TraceTable::intern_in_table(const JVMPI_CallFrame* frames, int count,
                                     unsigned thread_serial) {
  const KeyView view{thread_serial, frames, count > 0 ? count : 0};
  std::lock_guard lock(mutex_);
  if (auto it = serials_.find(view); it != serials_.end()) return it->second;
  Key key{thread_serial, {}};
  key.frames.reserve(static_cast<size_t>(view.count));
  for (int i = 0; i < view.count; ++i)
    key.frames.push_back({frames[i].method_id, frames[i].lineno});
  const unsigned serial = next_serial_++;
  traces_[serial] = TraceInfo{serial, thread_serial, key.frames, false};
  serials_.emplace(std::move(key), serial);
  return serial;
}

std::vector<TraceInfo> TraceTable::take_unwritten() {
  std::lock_guard lock(mutex_);
  std::vector<TraceInfo> out;
  for (auto it = traces_.lower_bound(first_unwritten_); it != traces_.end(); ++it) {
    TraceInfo& trace = it->second;
    if (!trace.written) {
      trace.written = true;
      out.push_back(trace);
    }
  }
  first_unwritten_ = next_serial_;
  return out;
}

void TraceTable::mark_all_unwritten() {
  std::lock_guard lock(mutex_);
  for (auto& [serial, trace] : traces_) trace.written = false;
  first_unwritten_ = 0;
}

TraceInfo TraceTable::find(unsigned serial) const {
  std::lock_guard lock(mutex_);
  auto it = traces_.find(serial);
  return it == traces_.end() ? TraceInfo{kEmptyTraceSerial, 0, {}, true} : it->second;
}

size_t TraceTable::size() const {
  std::lock_guard lock(mutex_);
  return traces_.size();
}

}  // namespace hprof::agent
