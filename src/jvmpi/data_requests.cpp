// SPDX-License-Identifier: Apache-2.0
#include "data_requests.h"

#include <jvmpi.h>
#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "event_gate.h"
#include "jvmti_access.h"
#include "log.h"
#include "thread_events.h"

namespace jvmpi::data_requests {
namespace {

sem_t g_reset_signals;
std::atomic<bool> g_reset_wanted{false};
std::atomic<bool> g_reset_installed{false};
std::atomic<bool> g_live{false};
std::atomic<bool> g_stopping{false};
std::atomic<bool> g_listening{false};
std::atomic<bool> g_listener_running{false};
struct sigaction g_previous_sigusr1 {};  // what SIGUSR1 did before install(), restored at detach

void on_sigusr1(int) {
  sem_post(&g_reset_signals);
}  // async-signal-safe

void JNICALL reset_listener_main(jvmtiEnv*, JNIEnv* jni, void*) {
  for (;;) {
    if (sem_wait(&g_reset_signals) != 0) continue;  // EINTR
    if (g_stopping.load() || gate::is_shut_down()) {
      g_listener_running.store(false);
      return;
    }
    LocalFrame frame(jni);  // this thread never returns to Java: the handler's references go here
    JVMPI_Event event{};
    event.event_type = JVMPI_EVENT_DATA_RESET_REQUEST;
    event.env_id = nullptr;  // a signal belongs to no Java thread
    gate::deliver(&event);
  }
}

void install(JNIEnv* jni) {
  if (g_reset_installed.exchange(true)) return;
  struct sigaction old_action {};
  sigaction(SIGUSR1, nullptr, &old_action);
  if (old_action.sa_handler != SIG_DFL && old_action.sa_handler != SIG_IGN) {
    log_warning("SIGUSR1 already has a handler; DATA_RESET_REQUEST cannot be signalled");
    return;
  }
  sem_init(&g_reset_signals, 0, 0);
  g_stopping.store(false);
  g_listener_running.store(true);
  if (!thread_events::start_thread(jni, "JVMPI reset listener", JVMTI_THREAD_NORM_PRIORITY,
                                   reset_listener_main, nullptr, /*internal=*/true)) {
    log_warning("could not start the reset listener; DATA_RESET_REQUEST cannot be signalled");
    return;
  }
  g_listening.store(true);
  struct sigaction action {};
  action.sa_handler = on_sigusr1;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, &g_previous_sigusr1);
}

}  // namespace

void JNICALL on_data_dump_request(jvmtiEnv*) {
  JNIEnv* jni = current_jni_env();
  if (jni != nullptr && !thread_events::ensure_known(jni)) jni = nullptr;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_DATA_DUMP_REQUEST;
  event.env_id = jni;
  gate::deliver(&event);
}

void enable_reset_signal() {
  g_reset_wanted.store(true);
  if (g_live.load()) {
    if (JNIEnv* jni = current_jni_env(); jni != nullptr) install(jni);
  }
}

void start(JNIEnv* jni) {
  g_live.store(true);
  if (g_reset_wanted.load()) install(jni);
}

void stop() {
  g_stopping.store(true);
  if (g_listening.load()) sem_post(&g_reset_signals);
}

void detach() {
  stop();
  // The program's own disposition of SIGUSR1 again; the listener ends at the post above
  // (bounded wait: a stuck agent handler on it must not hang the detach).
  if (g_listening.exchange(false)) {
    sigaction(SIGUSR1, &g_previous_sigusr1, nullptr);
    for (int i = 0; i < 1000 && g_listener_running.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  g_reset_installed.store(false);
  g_reset_wanted.store(false);
}

}  // namespace jvmpi::data_requests
