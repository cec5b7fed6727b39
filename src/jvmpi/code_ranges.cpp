// SPDX-License-Identifier: Apache-2.0
#include "code_ranges.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "hotspot_vm_structs.h"
#include "jvmti_access.h"

namespace jvmpi::code_ranges {
namespace {

struct Range {
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};  // 0: a free entry
  std::atomic<jmethodID> method{nullptr};
  std::atomic<Kind> kind{Kind::kUnknown};
};

// A fixed array that readers scan up to its high-water mark. Sized for what HotSpot generates:
// a few thousand stubs and codelets (vtable stubs keep coming), tens of thousands of compiled
// methods in a large program. Past that, new code is not recorded: its samples are then counted as
// unattributable rather than recovered.
class RangeTable {
 public:
  explicit RangeTable(uint32_t capacity)
      : capacity_(capacity), entries_(std::make_unique<Range[]>(capacity)) {}

  // Caller holds g_write_mutex.
  void add(uintptr_t start, uintptr_t end, Kind kind, jmethodID method) {
    uint32_t index = 0;
    if (auto it = index_of_start_.find(start); it != index_of_start_.end()) {
      index = it->second;  // the same code reported again (GenerateEvents replays it)
    } else if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else if (used_.load(std::memory_order_relaxed) < capacity_) {
      index = used_.load(std::memory_order_relaxed);
    } else {
      return;
    }
    Range& slot = entries_[index];
    slot.end.store(0, std::memory_order_release);  // invisible while it changes
    slot.kind.store(kind, std::memory_order_relaxed);
    slot.method.store(method, std::memory_order_relaxed);
    slot.start.store(start, std::memory_order_relaxed);
    slot.end.store(end, std::memory_order_release);
    index_of_start_[start] = index;
    if (index == used_.load(std::memory_order_relaxed)) {
      used_.store(index + 1, std::memory_order_release);
    }
  }

  // Caller holds g_write_mutex.
  void remove(uintptr_t start) {
    auto it = index_of_start_.find(start);
    if (it == index_of_start_.end()) return;
    entries_[it->second].end.store(0, std::memory_order_release);
    free_.push_back(it->second);
    index_of_start_.erase(it);
  }

  // Async-signal-safe.
  bool find(uintptr_t pc, Lookup* out) const {
    const uint32_t used = used_.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < used; ++i) {
      const Range& r = entries_[i];
      const uintptr_t end = r.end.load(std::memory_order_acquire);
      if (pc >= end) continue;
      if (pc < r.start.load(std::memory_order_relaxed)) continue;
      out->kind = r.kind.load(std::memory_order_relaxed);
      out->method = r.method.load(std::memory_order_relaxed);
      return true;
    }
    return false;
  }

 private:
  const uint32_t capacity_;
  std::unique_ptr<Range[]> entries_;
  std::atomic<uint32_t> used_{0};
  // The writers' index (under g_write_mutex; never read by the handler).
  std::unordered_map<uintptr_t, uint32_t> index_of_start_;
  std::vector<uint32_t> free_;
};

std::mutex g_write_mutex;
// Allocated at the first start and never freed: a late signal may still read them.
std::atomic<RangeTable*> g_generated{nullptr};  // stubs and the interpreter
std::atomic<RangeTable*> g_compiled{nullptr};
// Every recorded range lies in [g_low, g_high): most PCs of a failed walk are rejected at once.
std::atomic<uintptr_t> g_low{UINTPTR_MAX};
std::atomic<uintptr_t> g_high{0};
std::atomic<bool> g_recording{false};
// HotSpot's code cache: a PC there in no reported stub is compiled Java code.
std::atomic<uintptr_t> g_cache_low{0};
std::atomic<uintptr_t> g_cache_high{0};

void widen(uintptr_t start, uintptr_t end) {
  if (start < g_low.load(std::memory_order_relaxed)) g_low.store(start);
  if (end > g_high.load(std::memory_order_relaxed)) g_high.store(end);
}

// HotSpot names the template interpreter's code "Interpreter"; every other DynamicCodeGenerated
// name is a stub, an adapter or a codelet that is not a Java frame.
Kind kind_of_generated(const char* name) {
  return name != nullptr && std::strcmp(name, "Interpreter") == 0 ? Kind::kInterpreter
                                                                  : Kind::kStub;
}

}  // namespace

Lookup find(uintptr_t pc) {
  Lookup out;
  if (pc < g_low.load(std::memory_order_relaxed) || pc >= g_high.load(std::memory_order_relaxed)) {
    return out;
  }
  if (const RangeTable* t = g_compiled.load(std::memory_order_acquire);
      t != nullptr && t->find(pc, &out)) {
    return out;
  }
  if (const RangeTable* t = g_generated.load(std::memory_order_acquire);
      t != nullptr && t->find(pc, &out)) {
    return out;
  }
  if (pc >= g_cache_low.load(std::memory_order_relaxed) &&
      pc < g_cache_high.load(std::memory_order_relaxed)) {
    out.kind = Kind::kCompiled;  // method unknown unless CompiledMethodLoad reported it
  }
  return out;
}

void start_recording() {
  {
    std::lock_guard lock(g_write_mutex);
    if (g_recording.load()) return;
    if (g_generated.load() == nullptr) g_generated.store(new RangeTable(16384));
    if (g_compiled.load() == nullptr) g_compiled.store(new RangeTable(65536));
    // HotSpot's code cache: fixed once the VM is up.
    uintptr_t low_at = 0, high_at = 0, low = 0, high = 0;
    if (hotspot_vm_structs::static_address("CodeCache", "_low_bound", &low_at) &&
        hotspot_vm_structs::static_address("CodeCache", "_high_bound", &high_at)) {
      low = *reinterpret_cast<const uintptr_t*>(low_at);
      high = *reinterpret_cast<const uintptr_t*>(high_at);
    }
    if (low != 0 && high > low) {
      g_cache_low.store(low);
      g_cache_high.store(high);
      widen(low, high);
    }
    g_recording.store(true);
  }
  // Not CompiledMethodLoad: enabled, it makes the JIT record debug information at every
  // instruction, which moves samples between inlined frames. Its ranges are recorded only when the
  // agent enabled it anyway. Outside the lock: the replayed events come on this thread.
  jvmti_ok(
      jvmti()->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, nullptr),
      "SetEventNotificationMode(DynamicCodeGenerated)");
  jvmti()->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
}

void JNICALL on_dynamic_code_generated(jvmtiEnv*, const char* name, const void* address,
                                       jint length) {
  if (!g_recording.load(std::memory_order_relaxed) || address == nullptr || length <= 0) return;
  const auto start = reinterpret_cast<uintptr_t>(address);
  std::lock_guard lock(g_write_mutex);
  g_generated.load()->add(start, start + static_cast<uintptr_t>(length), kind_of_generated(name),
                          nullptr);
  widen(start, start + static_cast<uintptr_t>(length));
}

void on_compiled_method_load(jmethodID method, const void* address, jint length) {
  if (!g_recording.load(std::memory_order_relaxed) || address == nullptr || length <= 0) return;
  const auto start = reinterpret_cast<uintptr_t>(address);
  std::lock_guard lock(g_write_mutex);
  g_compiled.load()->add(start, start + static_cast<uintptr_t>(length), Kind::kCompiled, method);
  widen(start, start + static_cast<uintptr_t>(length));
}

void on_compiled_method_unload(const void* address) {
  if (!g_recording.load(std::memory_order_relaxed) || address == nullptr) return;
  std::lock_guard lock(g_write_mutex);
  g_compiled.load()->remove(reinterpret_cast<uintptr_t>(address));
}

}  // namespace jvmpi::code_ranges
