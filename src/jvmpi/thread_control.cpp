// SPDX-License-Identifier: Apache-2.0
#include "thread_control.h"

#include <jvmti.h>

#include <atomic>
#include <ctime>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "jvmti_access.h"
#include "known_methods.h"
#include "line_numbers.h"
#include "object_ids.h"
#include "thread_events.h"
#include "thread_registry.h"

namespace jvmpi::thread_control {
namespace {

jlong cpu_time_of(jthread thread) {
  jlong nanos = 0;
  if (jvmti()->GetThreadCpuTime(thread, &nanos) != JVMTI_ERROR_NONE) return -1;
  return nanos;
}

// Threads a JVMPI suspension holds. A thread that ends while suspended leaves the registry at its
// ThreadEnd, yet must stay resumable: a thread halting the VM posts its own ThreadEnd, is then
// suspended by a sampler, and would otherwise never be resumed — the VM's exit waits on it forever.
std::mutex g_suspended_mutex;
std::unordered_map<JNIEnv*, ThreadRecordPtr> g_suspended;

// Marks a JVMPI suspension with the thread's CPU time (ThreadHasRun compares consecutive marks)
// and holds the record until the resume.
void mark_suspended(const ThreadRecordPtr& record, jlong cpu) {
  {
    std::lock_guard lock(record->suspension_mutex);
    record->suspended_by_jvmpi = true;
    if (cpu >= 0) {
      record->cpu_at_previous_suspend = record->cpu_at_last_suspend;
      record->cpu_at_last_suspend = cpu;
    }
  }
  std::lock_guard lock(g_suspended_mutex);
  g_suspended[record->env] = record;
}

// The record to resume `env` by, marked resumed: the one held since JVMPI suspended it, else the
// live one.
ThreadRecordPtr take_for_resume(JNIEnv* env) {
  ThreadRecordPtr record;
  {
    std::lock_guard lock(g_suspended_mutex);
    if (auto it = g_suspended.find(env); it != g_suspended.end()) {
      record = std::move(it->second);
      g_suspended.erase(it);
    }
  }
  if (record == nullptr) record = threads::find(env);
  if (record != nullptr) {
    std::lock_guard lock(record->suspension_mutex);
    record->suspended_by_jvmpi = false;
  }
  return record;
}

bool is_self(const ThreadRecord& record) {
  return record.env == current_jni_env();
}

// The record for `env`; the calling thread is registered on first sight.
ThreadRecordPtr lookup(JNIEnv* env) {
  if (ThreadRecordPtr record = threads::find(env); record != nullptr) return record;
  if (env == nullptr || env != current_jni_env()) return nullptr;
  if (!thread_events::ensure_known(env)) return nullptr;
  return threads::find(env);
}

}  // namespace

void get_call_trace(JVMPI_CallTrace* trace, jint depth) {
  if (trace == nullptr) return;
  trace->num_frames = 0;
  if (depth <= 0 || trace->frames == nullptr) return;
  jthread thread = nullptr;  // the calling thread: the common case (every allocation asks)
  if (trace->env_id != current_jni_env()) {
    ThreadRecordPtr record = lookup(trace->env_id);
    if (record == nullptr) return;
    thread = record->thread;
  }
  fill_call_trace(thread, depth, /*bytecode_indexes=*/false, trace);
}

void fill_call_trace(jobject thread, jint depth, bool bytecode_indexes, JVMPI_CallTrace* trace) {
  constexpr jint kOnStack = 64;
  jvmtiFrameInfo on_stack[kOnStack];
  std::vector<jvmtiFrameInfo> on_heap;
  jvmtiFrameInfo* frames = on_stack;
  if (depth > kOnStack) {
    on_heap.resize(static_cast<size_t>(depth));
    frames = on_heap.data();
  }
  jint count = 0;
  if (jvmti()->GetStackTrace(thread, 0, depth, frames, &count) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < count; ++i) {
    trace->frames[i].method_id = known_methods::known_id(frames[i].method);
    // HotSpot's locations are bytecode indexes (< 65536); a native frame's is -1.
    trace->frames[i].lineno = bytecode_indexes
                                  ? static_cast<jint>(frames[i].location)
                                  : line_numbers::line_of(frames[i].method, frames[i].location);
  }
  trace->num_frames = count;
}

jlong current_thread_cpu_time() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<jlong>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void suspend(JNIEnv* env) {
  ThreadRecordPtr record = lookup(env);
  if (record == nullptr) return;
  if (is_self(*record)) {
    // After the call returns the thread has been resumed; the mark belongs before.
    mark_suspended(record, current_thread_cpu_time());
    jvmti()->SuspendThread(nullptr);
    return;
  }
  if (jvmti_ok(jvmti()->SuspendThread(record->thread), "SuspendThread",
               JVMTI_ERROR_THREAD_NOT_ALIVE)) {
    mark_suspended(record, cpu_time_of(record->thread));
  }
}

void resume(JNIEnv* env) {
  ThreadRecordPtr record = take_for_resume(env);
  if (record == nullptr) return;
  jvmti_ok(jvmti()->ResumeThread(record->thread), "ResumeThread", JVMTI_ERROR_THREAD_NOT_ALIVE);
}

void suspend_list(jint count, JNIEnv** envs, jint* results) {
  if (count <= 0 || envs == nullptr) return;
  std::vector<ThreadRecordPtr> records(static_cast<size_t>(count));
  std::vector<jthread> targets;
  std::vector<jint> index;
  JNIEnv* self = current_jni_env();
  for (jint i = 0; i < count; ++i) {
    if (results != nullptr) results[i] = JVMPI_FAIL;
    records[i] = threads::find(envs[i]);
    // The caller itself is suspended last, through suspend(), so it can record its own mark.
    if (records[i] != nullptr && envs[i] != self) {
      targets.push_back(records[i]->thread);
      index.push_back(i);
    }
  }
  if (!targets.empty()) {
    std::vector<jvmtiError> errors(targets.size());
    if (jvmti()->SuspendThreadList(static_cast<jint>(targets.size()), targets.data(),
                                   errors.data()) == JVMTI_ERROR_NONE) {
      for (size_t k = 0; k < targets.size(); ++k) {
        if (errors[k] != JVMTI_ERROR_NONE) continue;
        mark_suspended(records[index[k]], cpu_time_of(targets[k]));
        if (results != nullptr) results[index[k]] = JVMPI_SUCCESS;
      }
    }
  }
  for (jint i = 0; i < count; ++i) {
    if (records[i] != nullptr && envs[i] == self) {
      if (results != nullptr) results[i] = JVMPI_SUCCESS;
      suspend(envs[i]);
    }
  }
}

void resume_list(jint count, JNIEnv** envs, jint* results) {
  if (count <= 0 || envs == nullptr) return;
  std::vector<jthread> targets;
  std::vector<jint> index;
  std::vector<ThreadRecordPtr> records;
  for (jint i = 0; i < count; ++i) {
    if (results != nullptr) results[i] = JVMPI_FAIL;
    ThreadRecordPtr record = take_for_resume(envs[i]);
    if (record == nullptr) continue;
    targets.push_back(record->thread);
    index.push_back(i);
    records.push_back(std::move(record));
  }
  if (targets.empty()) return;
  std::vector<jvmtiError> errors(targets.size());
  if (jvmti()->ResumeThreadList(static_cast<jint>(targets.size()), targets.data(), errors.data()) !=
      JVMTI_ERROR_NONE) {
    return;
  }
  for (size_t k = 0; k < targets.size(); ++k) {
    if (errors[k] == JVMTI_ERROR_NONE && results != nullptr) results[index[k]] = JVMPI_SUCCESS;
  }
}

jint status(JNIEnv* env) {
  ThreadRecordPtr record = lookup(env);
  if (record == nullptr) return JVMPI_FAIL;
  jint state = 0;
  if (jvmti()->GetThreadState(record->thread, &state) != JVMTI_ERROR_NONE) return JVMPI_FAIL;
  jint result = JVMPI_THREAD_RUNNABLE;
  const int raw = record->raw_monitor_state.load();
  if (raw == 1 || (state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) != 0) {
    result = JVMPI_THREAD_MONITOR_WAIT;
  } else if (raw == 2 || (state & JVMTI_THREAD_STATE_WAITING) != 0) {
    result = JVMPI_THREAD_CONDVAR_WAIT;  // Object.wait, sleep, park
  }
  if ((state & JVMTI_THREAD_STATE_INTERRUPTED) != 0) result |= JVMPI_THREAD_INTERRUPTED;
  // A JVMPI suspension leaves the reported status alone; any other suspension sets the bit.
  if ((state & JVMTI_THREAD_STATE_SUSPENDED) != 0) {
    std::lock_guard lock(record->suspension_mutex);
    if (!record->suspended_by_jvmpi) result |= JVMPI_THREAD_SUSPENDED;
  }
  return result;
}

jboolean has_run(JNIEnv* env) {
  ThreadRecordPtr record = threads::find(env);
  if (record == nullptr) return JNI_FALSE;
  std::lock_guard lock(record->suspension_mutex);
  return record->cpu_at_last_suspend > record->cpu_at_previous_suspend ? JNI_TRUE : JNI_FALSE;
}

namespace {

struct SystemThreadStart {
  void (*f)(void*);
};

// JVMPI allows CreateSystemThread only from JVM_INIT_DONE on: the classes announced at VM init
// before it (the start-up batch) are too early, although JVMTI is already live then.
std::atomic<bool> g_system_threads_allowed{false};

void JNICALL run_system_thread(jvmtiEnv*, JNIEnv* jni, void* arg) {
  auto* start = static_cast<SystemThreadStart*>(arg);
  void (*f)(void*) = start->f;
  delete start;
  // JVMPI passes the function no argument of its own; the thread's JNIEnv is the most useful
  // value to hand it (and a safe one for agents that treat it as such).
  f(jni);
}

}  // namespace

void allow_system_threads() {
  g_system_threads_allowed.store(true);
}

jint create_system_thread(char* name, jint priority, void (*f)(void*)) {
  JNIEnv* jni = current_jni_env();
  if (f == nullptr || jni == nullptr || !g_system_threads_allowed.load() ||
      current_phase() != JVMTI_PHASE_LIVE) {
    return JNI_ERR;
  }
  auto* start = new SystemThreadStart{f};
  if (!thread_events::start_thread(jni, name, priority, run_system_thread, start, false)) {
    delete start;
    return JNI_ERR;
  }
  return JNI_OK;
}

void set_local_storage(JNIEnv* env, void* ptr) {
  if (ThreadRecord* own = threads::self(env); own != nullptr) {
    own->local_storage.store(ptr, std::memory_order_release);
  } else if (ThreadRecordPtr record = lookup(env); record != nullptr) {
    record->local_storage.store(ptr, std::memory_order_release);
  }
}

void* get_local_storage(JNIEnv* env) {
  if (ThreadRecord* own = threads::self(env); own != nullptr) {
    return own->local_storage.load(std::memory_order_acquire);
  }
  ThreadRecordPtr record = lookup(env);
  return record != nullptr ? record->local_storage.load(std::memory_order_acquire) : nullptr;
}

jobjectID thread_object(JNIEnv* env) {
  ThreadRecordPtr record = lookup(env);
  return record != nullptr ? object_ids::id_of(record->thread) : nullptr;
}

}  // namespace jvmpi::thread_control
