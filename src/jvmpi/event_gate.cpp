// SPDX-License-Identifier: Apache-2.0
#include "event_gate.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "jvmpi_interface.h"
#include "log.h"

namespace jvmpi::gate {
namespace {

constexpr int kEventSlots = JVMPI_MAX_EVENT_TYPE_VAL + 1;
std::atomic<bool> g_enabled[kEventSlots];
std::atomic<bool> g_open{false};
std::atomic<bool> g_closed{false};
// Set while this thread runs the agent's JVM_SHUT_DOWN handler, which may still request events
// (a final heap dump, say) although delivery is otherwise closed.
thread_local bool t_in_shut_down = false;

// Deliveries in progress on one thread, so that shutdown can wait for them. Per thread rather than
// one shared counter: method events come from every thread at once, and a shared counter's cache
// line would bounce between them. Constant-initialized, so reaching it costs no lazy-init check.
struct DeliveryDepth {
  std::atomic<int> depth{0};
  bool registered = false;
};
thread_local DeliveryDepth t_delivery;

std::mutex g_depths_mutex;
// Of live threads that have delivered an event. Never destroyed: threads may still end after the
// process has begun running static destructors.
std::vector<DeliveryDepth*>& g_depths = *new std::vector<DeliveryDepth*>;
pthread_key_t g_depths_key;  // its destructor takes an ending thread's slot off g_depths

void forget_depth(void* slot) {
  std::lock_guard lock(g_depths_mutex);
  std::erase(g_depths, static_cast<DeliveryDepth*>(slot));
}

const bool g_depths_key_made = pthread_key_create(&g_depths_key, forget_depth) == 0;

DeliveryDepth& delivery_depth() {
  DeliveryDepth& self = t_delivery;
  if (!self.registered) {
    self.registered = true;
    std::lock_guard lock(g_depths_mutex);
    g_depths.push_back(&self);
    if (g_depths_key_made) pthread_setspecific(g_depths_key, &self);
  }
  return self;
}

// Deliveries in progress on threads other than the caller's (whose own handler may be what leads
// to shutdown, through ProfilerExit, and must not wait for itself).
int in_flight_elsewhere() {
  const DeliveryDepth* self = &t_delivery;
  std::lock_guard lock(g_depths_mutex);
  int n = 0;
  for (const DeliveryDepth* d : g_depths) {
    if (d != self) n += d->depth.load();
  }
  return n;
}

bool valid(jint event_type) {
  return event_type > 0 && event_type < kEventSlots;
}

void (*notify_function())(JVMPI_Event*) {
  // The agent writes NotifyEvent itself, possibly after enabling events; read it atomically.
  return std::atomic_ref(jvmpi_interface().NotifyEvent).load(std::memory_order_acquire);
}

// Whether shut_down can impose a full barrier on every thread of the process (membarrier), which
// lets each delivery announce itself with a plain store instead of a locked instruction.
std::atomic<bool> g_asymmetric_fence{false};  // set once in open(), before any delivery

void call_agent(JVMPI_Event* event) {
  DeliveryDepth& self = delivery_depth();
  const int depth = self.depth.load(std::memory_order_relaxed);
  // The depth store must be visible before the closed flag is read, while shut_down stores the
  // flag before reading depths: either it sees this delivery in progress or this thread sees
  // delivery closed. membarrier in shut_down supplies the fence for this side when available.
  if (g_asymmetric_fence.load(std::memory_order_relaxed)) {
    self.depth.store(depth + 1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    self.depth.store(depth + 1);
  }
  if (!g_closed.load(std::memory_order_relaxed) || t_in_shut_down) {
    if (auto notify = notify_function(); notify != nullptr) notify(event);
  }
  self.depth.store(depth, std::memory_order_release);
}

}  // namespace

bool is_enabled(jint event_type) {
  return valid(event_type) && g_enabled[event_type].load(std::memory_order_relaxed);
}

void set_enabled(jint event_type, bool on) {
  if (valid(event_type)) g_enabled[event_type].store(on, std::memory_order_release);
}

bool accepting() {
  return g_open.load(std::memory_order_acquire) && !g_closed.load(std::memory_order_acquire) &&
         notify_function() != nullptr;
}

// Inside the agent's JVM_SHUT_DOWN handler, what its requests cause (a heap dump announcing a
// class first, say) still reaches it.
static bool open_to_this_thread() {
  return accepting() || (t_in_shut_down && notify_function() != nullptr);
}

bool wants(jint event_type) {
  return is_enabled(event_type) && open_to_this_thread();
}

void deliver(JVMPI_Event* event) {
  if (wants(event->event_type)) call_agent(event);
}

void deliver_wanted(JVMPI_Event* event) {
  call_agent(event);
}

void deliver_requested(JVMPI_Event* event) {
  if (!open_to_this_thread()) return;
  event->event_type |= JVMPI_REQUESTED_EVENT;
  call_agent(event);
}

void open() {
  g_asymmetric_fence.store(
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
  g_open.store(true, std::memory_order_release);
}

void shut_down(JNIEnv* env) {
  const bool send = wants(JVMPI_EVENT_JVM_SHUT_DOWN);
  if (g_closed.exchange(true)) return;
  if (g_asymmetric_fence.load()) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  // Threads already inside NotifyEvent finish first, so JVM_SHUT_DOWN is the last event the agent
  // sees. A handler that never returns must not hang the VM's exit: the wait is bounded.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight_elsewhere() > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      log_warning("an event handler did not return within 5 s; sending JVM_SHUT_DOWN anyway");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (send) {
    if (auto notify = notify_function(); notify != nullptr) {
      JVMPI_Event event{};
      event.event_type = JVMPI_EVENT_JVM_SHUT_DOWN;
      event.env_id = env;
      t_in_shut_down = true;
      notify(&event);
      t_in_shut_down = false;
    }
  }
}

void reopen() {
  for (auto& enabled : g_enabled) enabled.store(false);
  g_open.store(false, std::memory_order_release);
  g_closed.store(false, std::memory_order_release);
}

bool is_shut_down() {
  return g_closed.load(std::memory_order_acquire);
}

}  // namespace jvmpi::gate
