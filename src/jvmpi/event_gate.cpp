#include "event_gate.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "jvmpi_interface.h"
#include "log.h"

namespace jvmpi::gate {
namespace {

constexpr int kEventSlots = JVMPI_MAX_EVENT_TYPE_VAL + 1;
std::atomic<bool> g_enabled[kEventSlots];
std::atomic<bool> g_open{false};
std::atomic<bool> g_closed{false};
std::atomic<int> g_in_flight{0};
// Deliveries in progress on this thread: a handler that leads to shutdown (ProfilerExit) must not
// wait for itself.
thread_local int t_depth = 0;
// Set while this thread runs the agent's JVM_SHUT_DOWN handler, which may still request events
// (a final heap dump, say) although delivery is otherwise closed.
thread_local bool t_in_shut_down = false;

bool valid(jint event_type) {
  return event_type > 0 && event_type < kEventSlots;
}

void (*notify_function())(JVMPI_Event*) {
  // The agent writes NotifyEvent itself, possibly after enabling events; read it atomically.
  return std::atomic_ref(jvmpi_interface().NotifyEvent).load(std::memory_order_acquire);
}

void call_agent(JVMPI_Event* event) {
  g_in_flight.fetch_add(1);
  ++t_depth;
  if (!g_closed.load() || t_in_shut_down) {
    if (auto notify = notify_function(); notify != nullptr) notify(event);
  }
  --t_depth;
  g_in_flight.fetch_sub(1);
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

void deliver_requested(JVMPI_Event* event) {
  if (!open_to_this_thread()) return;
  event->event_type |= JVMPI_REQUESTED_EVENT;
  call_agent(event);
}

void open() {
  g_open.store(true, std::memory_order_release);
}

void shut_down(JNIEnv* env) {
  const bool send = wants(JVMPI_EVENT_JVM_SHUT_DOWN);
  if (g_closed.exchange(true)) return;
  // Threads already inside NotifyEvent finish first, so JVM_SHUT_DOWN is the last event the agent
  // sees. A handler that never returns must not hang the VM's exit: the wait is bounded.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (g_in_flight.load() > t_depth) {
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

bool is_shut_down() {
  return g_closed.load(std::memory_order_acquire);
}

}  // namespace jvmpi::gate
