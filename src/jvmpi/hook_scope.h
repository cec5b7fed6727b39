// SPDX-License-Identifier: Apache-2.0
// Hooks that instrumented code calls deliver events to the agent, whose handler may run
// instrumented Java code again; the hooks that nested code reaches report nothing (the agent would
// otherwise recurse, or see its own work).
#pragma once

namespace jvmpi {

inline thread_local bool t_in_hook = false;

class HookScope {
 public:
  HookScope() : entered_(!t_in_hook) { t_in_hook = true; }
  ~HookScope() {
    if (entered_) t_in_hook = false;
  }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace jvmpi
