// SPDX-License-Identifier: Apache-2.0
// cpu=times bookkeeping (src/hprof/cpu_timer.cpp) against a plain model of it: random method
// entries and exits on several threads, with a scripted CPU clock, must give exactly the calls,
// self times and inclusive times per trace that the model computes by building every trace from
// scratch. Small method sets make many distinct traces that collide in the per-thread memo.
#include "cpu_timer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "jvmpi_client.h"

namespace hprof::agent {
namespace {

JVMPI_Interface* g_table = nullptr;

// The fake runtime: thread-local storage per JNIEnv, and a CPU clock the test sets before each
// event.
std::mutex g_storage_mutex;
std::map<JNIEnv*, void*> g_storage;
thread_local jlong t_now = 0;

void set_storage(JNIEnv* env, void* ptr) {
  std::lock_guard lock(g_storage_mutex);
  g_storage[env] = ptr;
}
void* get_storage(JNIEnv* env) {
  std::lock_guard lock(g_storage_mutex);
  auto it = g_storage.find(env);
  return it == g_storage.end() ? nullptr : it->second;
}
jlong cpu_time() {
  return t_now;
}
// The monotonic clock the timer times intervals with: the test's threads never leave the CPU, so
// it reads the same as their CPU clock (cpu_clock_test.cpp scripts the two apart).
uint64_t wall_time() {
  return static_cast<uint64_t>(t_now);
}

}  // namespace

JVMPI_Interface* jvmpi() {
  return g_table;
}
void set_jvmpi(JVMPI_Interface* table) {
  g_table = table;
}

namespace {

// (thread serial, methods top first) -> calls, self ns, inclusive ns
using Key = std::pair<unsigned, std::vector<jmethodID>>;
struct Expected {
  uint64_t calls = 0, self_ns = 0, inclusive_ns = 0;
};
using ExpectedCosts = std::map<Key, Expected>;

struct Params {
  int depth;
  bool thread_in_traces;
};

class CpuTimerTest : public ::testing::TestWithParam<Params> {
 protected:
  void SetUp() override {
    table_.SetThreadLocalStorage = set_storage;
    table_.GetThreadLocalStorage = get_storage;
    table_.GetCurrentThreadCpuTime = cpu_time;
    set_jvmpi(&table_);
    options_.cpu = CpuMode::kTimes;
    options_.depth = GetParam().depth;
    options_.thread_in_traces = GetParam().thread_in_traces;
  }
  void TearDown() override {
    set_jvmpi(nullptr);
    std::lock_guard lock(g_storage_mutex);
    g_storage.clear();
  }

  void start_thread(JNIEnv* env, const std::string& name) {
    JVMPI_Event e{};
    e.event_type = JVMPI_EVENT_THREAD_START;
    std::string group = "main";
    e.u.thread_start.thread_name = const_cast<char*>(name.c_str());
    e.u.thread_start.group_name = group.data();
    e.u.thread_start.parent_name = group.data();
    e.u.thread_start.thread_env_id = env;
    threads_.on_thread_start(e);
  }

  // One thread's random walk, applied to the timer and to the model.
  void drive(JNIEnv* env, unsigned seed, int steps, int methods, ExpectedCosts& expected) {
    struct Frame {
      jmethodID method;
      uint64_t start, callee;
    };
    std::vector<Frame> stack;
    std::mt19937 rng(seed);
    const auto method_id = [](int i) { return reinterpret_cast<jmethodID>(uintptr_t(i + 1) * 16); };
    uint64_t now = 1000;
    bool named = !GetParam().thread_in_traces;
    for (int step = 0; step < steps; ++step) {
      now += rng() % 1000;
      t_now = static_cast<jlong>(now);
      const unsigned r = rng() % 100;
      if (!named && step == steps / 4) {
        // Until now the thread had no serial (kUnknownThreadSerial in its traces).
        start_thread(env, "worker-" + std::to_string(seed));
        named = true;
      }
      if (step == steps / 2) {
        // The thread ends and its JNIEnv comes back as a new thread.
        timer_.on_thread_end(env);
        threads_.on_thread_end(env);
        stack.clear();
        if (named) start_thread(env, "again-" + std::to_string(seed));
        continue;
      }
      if (r < 50 && stack.size() < 40) {
        const jmethodID m = method_id(static_cast<int>(rng() % methods));
        timer_.on_entry(env, m);
        stack.push_back({m, now, 0});
        continue;
      }
      // Mostly the top method exits; sometimes one further down (the ones above it never
      // reported their exits), or one not on the stack at all.
      jmethodID m;
      if (r < 92 && !stack.empty()) {
        m = stack.back().method;
      } else if (r < 97 && !stack.empty()) {
        m = stack[rng() % stack.size()].method;
      } else {
        m = method_id(static_cast<int>(rng() % (methods + 2)));
      }
      timer_.on_exit(env, m);
      size_t i = stack.size();
      while (i > 0 && stack[i - 1].method != m) --i;
      if (i == 0) continue;
      const Frame f = stack[i - 1];
      Key key{options_.thread_in_traces ? threads_.serial_of(env) : 0u, {}};
      const size_t count = std::min<size_t>(static_cast<size_t>(options_.depth), i);
      for (size_t k = 0; k < count; ++k) key.second.push_back(stack[i - 1 - k].method);
      stack.resize(i - 1);
      const uint64_t elapsed = now - f.start;
      if (!stack.empty()) stack.back().callee += elapsed;
      Expected& e = expected[key];
      e.calls += 1;
      e.self_ns += elapsed - f.callee;
      e.inclusive_ns += elapsed;
    }
  }

  // What the timer reports, by trace contents.
  std::map<Key, std::pair<uint64_t, uint64_t>> reported(bool inclusive) {
    std::map<Key, std::pair<uint64_t, uint64_t>> out;
    for (const Cost& c : timer_.costs(inclusive)) {
      const TraceInfo info = traces_.find(c.trace);
      Key key{info.thread_serial, {}};
      for (const auto& f : info.frames) {
        EXPECT_EQ(f.line, -1);
        key.second.push_back(f.method);
      }
      EXPECT_TRUE(out.emplace(key, std::make_pair(c.count, c.time_ns)).second)
          << "two serials for one trace";
    }
    return out;
  }

  void expect_costs(const ExpectedCosts& expected) {
    for (const bool inclusive : {false, true}) {
      const auto got = reported(inclusive);
      size_t nonzero = 0;
      for (const auto& [key, e] : expected) {
        if (e.calls == 0) continue;
        ++nonzero;
        auto it = got.find(key);
        ASSERT_NE(it, got.end()) << "a trace of depth " << key.second.size() << " is missing";
        EXPECT_EQ(it->second.first, e.calls);
        EXPECT_EQ(it->second.second, inclusive ? e.inclusive_ns : e.self_ns);
      }
      EXPECT_EQ(got.size(), nonzero) << "traces the model never saw";
    }
  }

  JVMPI_Interface table_{};
  Options options_;
  ThreadTable threads_;
  TraceTable traces_;
  CpuTimer timer_{options_, threads_, traces_, wall_time};
};

JNIEnv* fake_env(int i) {
  return reinterpret_cast<JNIEnv*>(uintptr_t(0x10000) * (i + 1));
}

TEST_P(CpuTimerTest, OneThreadMatchesTheModel) {
  ExpectedCosts expected;
  drive(fake_env(0), 1, 200000, 6, expected);
  expect_costs(expected);
}

TEST_P(CpuTimerTest, ManyDistinctTracesMatchTheModel) {
  ExpectedCosts expected;
  drive(fake_env(0), 2, 300000, 40, expected);
  expect_costs(expected);
}

TEST_P(CpuTimerTest, ThreadsAtOnceMatchTheModel) {
  constexpr int kThreads = 4;
  std::vector<ExpectedCosts> per_thread(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { drive(fake_env(i), 10 + i, 100000, 12, per_thread[i]); });
  }
  for (auto& t : threads) t.join();
  ExpectedCosts expected;
  for (const auto& costs : per_thread) {
    for (const auto& [key, e] : costs) {
      Expected& sum = expected[key];
      sum.calls += e.calls;
      sum.self_ns += e.self_ns;
      sum.inclusive_ns += e.inclusive_ns;
    }
  }
  expect_costs(expected);
}

TEST_P(CpuTimerTest, ClearForgetsCostsButTracesStayRight) {
  ExpectedCosts before, after;
  drive(fake_env(0), 3, 50000, 10, before);
  timer_.clear();
  drive(fake_env(1), 4, 50000, 10, after);
  expect_costs(after);
}

INSTANTIATE_TEST_SUITE_P(Depths, CpuTimerTest,
                         ::testing::Values(Params{0, false}, Params{1, false}, Params{2, true},
                                           Params{4, false}, Params{4, true}, Params{8, false},
                                           Params{9, true}, Params{16, false}),
                         [](const ::testing::TestParamInfo<Params>& info) {
                           return "depth" + std::to_string(info.param.depth) +
                                  (info.param.thread_in_traces ? "_thread" : "");
                         });

}  // namespace
}  // namespace hprof::agent
