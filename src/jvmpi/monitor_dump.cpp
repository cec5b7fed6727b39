// SPDX-License-Identifier: Apache-2.0
#include "monitor_dump.h"

#include <jvmti.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "dump_buffer.h"
#include "event_gate.h"
#include "jvmti_access.h"
#include "object_ids.h"
#include "raw_monitors.h"
#include "thread_control.h"
#include "thread_registry.h"

namespace jvmpi::monitor_dump {
namespace {

constexpr jint kTraceDepth = 256;

JNIEnv* env_of(JNIEnv* jni, const std::vector<ThreadRecordPtr>& records, jthread thread) {
  if (thread == nullptr) return nullptr;
  for (const auto& r : records) {
    if (r->thread != nullptr && jni->IsSameObject(r->thread, thread)) return r->env;
  }
  return nullptr;
}

void write_env_list(DumpBuffer& out, const std::vector<JNIEnv*>& envs) {
  out.u4(static_cast<uint32_t>(envs.size()));
  for (JNIEnv* e : envs) out.id(e);
}

// The Java monitors some thread owns, is entering, or waits on: JVMTI has no list of all
// monitors, but every monitor in use is one of these.
std::vector<jobject> monitors_in_use(JNIEnv* jni, const std::vector<ThreadRecordPtr>& records) {
  std::vector<jobject> monitors;
  std::unordered_set<jlong> seen;
  auto keep = [&](jobject m) {
    if (m == nullptr) return;
    if (seen.insert(object_ids::to_tag(object_ids::id_of(m))).second) {
      monitors.push_back(m);
    } else {
      jni->DeleteLocalRef(m);
    }
  };
  for (const auto& r : records) {
    if (r->thread == nullptr) continue;
    jint count = 0;
    JvmtiPtr<jobject> owned;
    if (jvmti()->GetOwnedMonitorInfo(r->thread, &count, owned.out()) == JVMTI_ERROR_NONE) {
      for (jint i = 0; i < count; ++i) keep(owned[i]);
    }
    jobject contended = nullptr;
    if (jvmti()->GetCurrentContendedMonitor(r->thread, &contended) == JVMTI_ERROR_NONE) {
      keep(contended);
    }
    std::lock_guard lock(r->waiting_mutex);
    if (r->waiting_on != nullptr) keep(jni->NewLocalRef(r->waiting_on));
  }
  return monitors;
}

void write_java_monitor(JNIEnv* jni, DumpBuffer& out, const std::vector<ThreadRecordPtr>& records,
                        jobject monitor) {
  jvmtiMonitorUsage usage{};
  if (jvmti()->GetObjectMonitorUsage(monitor, &usage) != JVMTI_ERROR_NONE) return;
  std::vector<JNIEnv*> notify;
  for (jint i = 0; i < usage.notify_waiter_count; ++i) {
    if (JNIEnv* e = env_of(jni, records, usage.notify_waiters[i]); e != nullptr)
      notify.push_back(e);
  }
  // Some VMs also list the threads waiting for a notification among the waiters; they are
  // counted once, as waiting to be notified.
  std::vector<JNIEnv*> entering;
  for (jint i = 0; i < usage.waiter_count; ++i) {
    JNIEnv* e = env_of(jni, records, usage.waiters[i]);
    if (e != nullptr && std::find(notify.begin(), notify.end(), e) == notify.end()) {
      entering.push_back(e);
    }
  }
  out.u1(JVMPI_MONITOR_JAVA);
  out.id(object_ids::id_of(monitor));
  out.id(env_of(jni, records, usage.owner));
  out.u4(static_cast<uint32_t>(usage.owner != nullptr ? usage.entry_count : 0));
  write_env_list(out, entering);
  write_env_list(out, notify);
  for (jint i = 0; i < usage.waiter_count; ++i) jni->DeleteLocalRef(usage.waiters[i]);
  for (jint i = 0; i < usage.notify_waiter_count; ++i) jni->DeleteLocalRef(usage.notify_waiters[i]);
  if (usage.owner != nullptr) jni->DeleteLocalRef(usage.owner);
  jvmti()->Deallocate(reinterpret_cast<unsigned char*>(usage.waiters));
  jvmti()->Deallocate(reinterpret_cast<unsigned char*>(usage.notify_waiters));
}

}  // namespace

jint request_monitor_dump(JNIEnv* jni) {
  if (jni == nullptr) return JVMPI_FAIL;
  std::vector<ThreadRecordPtr> records = threads::all();
  std::erase_if(records, [](const ThreadRecordPtr& r) { return r->internal; });

  DumpBuffer out;
  for (jobject monitor : monitors_in_use(jni, records)) {
    write_java_monitor(jni, out, records, monitor);
    jni->DeleteLocalRef(monitor);
  }
  raw_monitors::for_each_in_use([&out](const raw_monitors::RawMonitorState& m) {
    out.u1(JVMPI_MONITOR_RAW);
    out.id(m.name);
    out.id(m.id);
    out.id(m.owner);
    out.u4(static_cast<uint32_t>(m.entry_count));
    write_env_list(out, m.entering);
    write_env_list(out, m.waiting);
  });
  if (out.failed()) return JVMPI_FAIL;

  std::vector<std::vector<JVMPI_CallFrame>> frames(records.size());
  std::vector<JVMPI_CallTrace> traces(records.size());
  std::vector<jint> status(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    frames[i].resize(kTraceDepth);
    traces[i] = {records[i]->env, 0, frames[i].data()};
    thread_control::get_call_trace(&traces[i], kTraceDepth);
    status[i] = thread_control::status(records[i]->env);
  }

  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_MONITOR_DUMP;
  event.env_id = jni;
  auto& e = event.u.monitor_dump;
  e.begin = out.begin();
  e.end = out.end();
  e.num_traces = static_cast<jint>(traces.size());
  e.traces = traces.data();
  e.threads_status = status.data();
  gate::deliver_requested(&event);
  return JVMPI_SUCCESS;
}

}  // namespace jvmpi::monitor_dump
