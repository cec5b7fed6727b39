// SPDX-License-Identifier: Apache-2.0
// The profiles `jvmprof serve` shows: connected JVMs and opened files, by id. Sessions stay after
// their JVM goes away, so what it sent can still be looked at.
#pragma once

#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent_session.h"

namespace jvmprof {

class SessionRegistry {
 public:
  explicit SessionRegistry(SessionLimits limits, size_t max_sessions = 256)
      : limits_(limits), max_sessions_(max_sessions) {}
  ~SessionRegistry() { stop_all(); }

  // Every session added from now on calls `hook` with each period its JVM sends (a history
  // store subscribes here).
  void set_period_hook(PeriodHook hook) {
    std::lock_guard lock(mu_);
    period_hook_ = std::move(hook);
  }
  // Every session added from now on tells `hook` when its JVM's connection begins and ends (a
  // profile store keeps the connection history).
  void set_connection_hook(ConnectionHook hook) {
    std::lock_guard lock(mu_);
    connection_hook_ = std::move(hook);
  }
  // Takes ownership of `fd` (closed if the registry is full); null when full.
  std::shared_ptr<Session> add(std::string name, int fd, bool is_socket, uint64_t size) {
    std::lock_guard lock(mu_);
    if (sessions_.size() >= max_sessions_) {
      ::close(fd);
      return nullptr;
    }
    auto s = std::make_shared<Session>(next_id_++, std::move(name), fd, is_socket, size, limits_);
    s->set_period_hook(period_hook_);
    s->set_connection_hook(connection_hook_);
    sessions_.push_back(s);
    s->start();
    return s;
  }
  std::shared_ptr<Session> find(uint32_t id) const {
    std::lock_guard lock(mu_);
    for (const auto& s : sessions_)
      if (s->id() == id) return s;
    return nullptr;
  }
  std::vector<std::shared_ptr<Session>> all() const {
    std::lock_guard lock(mu_);
    return sessions_;
  }
  void clear() {
    std::lock_guard lock(mu_);
    sessions_.clear();
  }
  void stop_all() {
    for (const auto& s : all()) s->stop();
  }

 private:
  const SessionLimits limits_;
  const size_t max_sessions_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Session>> sessions_;
  uint32_t next_id_ = 1;
  PeriodHook period_hook_;
  ConnectionHook connection_hook_;
};

}  // namespace jvmprof
