// SPDX-License-Identifier: Apache-2.0
#include "thread_registry.h"

#include <pthread.h>
#include <unistd.h>

#include <ctime>
#include <shared_mutex>
#include <unordered_map>

#include "jni_reference_events.h"
#include "jvmti_access.h"

namespace jvmpi {

ThreadRecord::~ThreadRecord() {
  JNIEnv* env = current_jni_env();
  if (env == nullptr) return;
  jni_reference_events::InternalScope internal;
  if (thread != nullptr) env->DeleteGlobalRef(thread);
  if (waiting_on != nullptr) env->DeleteWeakGlobalRef(waiting_on);
}

namespace threads {
namespace {

std::shared_mutex g_mutex;
std::unordered_map<JNIEnv*, ThreadRecordPtr> g_records;

// The calling thread's own record, so the hot paths (thread-local storage, events) skip the map.
thread_local ThreadRecordPtr t_self;

jlong own_cpu_time() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<jlong>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

// Whether the thread-local shortcut holds the live record of `env`.
bool self_is(JNIEnv* env) {
  return t_self != nullptr && t_self->env == env &&
         !t_self->retired.load(std::memory_order_relaxed);
}

ThreadRecordPtr find(JNIEnv* env) {
  if (env == nullptr) return nullptr;
  if (self_is(env)) return t_self;
  std::shared_lock lock(g_mutex);
  auto it = g_records.find(env);
  return it == g_records.end() ? nullptr : it->second;
}

ThreadRecord* self(JNIEnv* env) {
  return env != nullptr && self_is(env) ? t_self.get() : nullptr;
}

ThreadRecordPtr find_by_object(JNIEnv* caller, jobject thread) {
  if (thread == nullptr) return nullptr;
  std::shared_lock lock(g_mutex);
  for (const auto& [env, record] : g_records) {
    if (caller->IsSameObject(record->thread, thread)) return record;
  }
  return nullptr;
}

ThreadRecordPtr current(JNIEnv* env, jthread thread, bool* created) {
  if (created != nullptr) *created = false;
  if (env == nullptr) return nullptr;
  if (self_is(env)) return t_self;
  {
    std::shared_lock lock(g_mutex);
    auto it = g_records.find(env);
    if (it != g_records.end()) {
      t_self = it->second;
      return t_self;
    }
  }
  jthread local = thread;
  if (local == nullptr && jvmti()->GetCurrentThread(&local) != JVMTI_ERROR_NONE) local = nullptr;
  if (local == nullptr) return nullptr;
  auto record = std::make_shared<ThreadRecord>();
  record->env = env;
  {
    jni_reference_events::InternalScope internal;
    record->thread = static_cast<jthread>(env->NewGlobalRef(local));
  }
  // The CPU time consumed before the first suspension is the baseline ThreadHasRun compares with.
  record->cpu_at_last_suspend = own_cpu_time();
  record->cpu_at_previous_suspend = record->cpu_at_last_suspend;
  if (pthread_getcpuclockid(pthread_self(), &record->cpu_clock) == 0) record->tid = gettid();
  if (thread == nullptr) env->DeleteLocalRef(local);
  {
    std::unique_lock lock(g_mutex);
    auto [it, inserted] = g_records.emplace(env, record);
    if (!inserted) {
      jni_reference_events::InternalScope internal;
      env->DeleteGlobalRef(record->thread);
      record->thread = nullptr;
      record = it->second;
    } else if (created != nullptr) {
      *created = true;
    }
  }
  t_self = record;
  return record;
}

void remove(JNIEnv* env) {
  ThreadRecordPtr record;
  {
    std::unique_lock lock(g_mutex);
    auto it = g_records.find(env);
    if (it == g_records.end()) return;
    record = std::move(it->second);
    g_records.erase(it);
  }
  if (t_self == record) t_self.reset();
}

std::vector<ThreadRecordPtr> all() {
  std::shared_lock lock(g_mutex);
  std::vector<ThreadRecordPtr> out;
  out.reserve(g_records.size());
  for (const auto& [env, record] : g_records) out.push_back(record);
  return out;
}

ThreadRecordPtr adopt(JNIEnv* caller, jthread thread, JNIEnv* env, pid_t tid) {
  if (caller == nullptr || thread == nullptr || env == nullptr) return nullptr;
  {
    std::shared_lock lock(g_mutex);
    auto it = g_records.find(env);
    if (it != g_records.end()) return it->second;
  }
  auto record = std::make_shared<ThreadRecord>();
  record->env = env;
  {
    jni_reference_events::InternalScope internal;
    record->thread = static_cast<jthread>(caller->NewGlobalRef(thread));
  }
  if (tid > 0) {
    // The thread's CPU clock as pthread_getcpuclockid makes it from a kernel thread id
    // (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) of the Linux clock ABI).
    record->cpu_clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
    timespec ts{};
    if (clock_gettime(record->cpu_clock, &ts) == 0) {
      record->tid = tid;
      record->cpu_at_last_suspend = static_cast<jlong>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
      record->cpu_at_previous_suspend = record->cpu_at_last_suspend;
    }
  }
  std::unique_lock lock(g_mutex);
  auto [it, inserted] = g_records.emplace(env, record);
  if (!inserted) {
    jni_reference_events::InternalScope internal;
    caller->DeleteGlobalRef(record->thread);
    record->thread = nullptr;
    return it->second;
  }
  return record;
}

void retire_all() {
  std::unordered_map<JNIEnv*, ThreadRecordPtr> records;
  {
    std::unique_lock lock(g_mutex);
    records.swap(g_records);
  }
  for (auto& [env, record] : records) record->retired.store(true);
  t_self.reset();
}

}  // namespace threads
}  // namespace jvmpi
