// SPDX-License-Identifier: Apache-2.0
// jvmpi.h against the binary facts of the original header (shared/jvmpi-abi.md sections 1-6),
// as compiled by C (abi_c.c) and by C++ (here). No JVM needed.
#include <gtest/gtest.h>
#include <jvmpi.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "abi_c.h"

namespace {

struct Fact {
  std::string what;
  long long expected;
  long long actual;  // as C++ sees it
};

const std::vector<Fact>& Facts() {
  static const std::vector<Fact> facts{
#define CONST(name, value) {#name, (long long)(value), (long long)(name)},
#define SIZE(type, bytes) {"sizeof(" #type ")", (long long)(bytes), (long long)sizeof(type)},
#define ALIGN(type, bytes) {"_Alignof(" #type ")", (long long)(bytes), (long long)alignof(type)},
#define OFF(type, member, offset) \
  {"offsetof(" #type ", " #member ")", (long long)(offset), (long long)offsetof(type, member)},
#include "abi_facts.def"
#undef CONST
#undef SIZE
#undef ALIGN
#undef OFF
  };
  return facts;
}

TEST(JvmpiAbi, CxxLayoutAndConstants) {
  for (const auto& f : Facts()) EXPECT_EQ(f.actual, f.expected) << f.what;
}

TEST(JvmpiAbi, CLayoutAndConstants) {
  size_t n = 0;
  const abi_measure* c = abi_c_measures(&n);
  ASSERT_EQ(n, Facts().size());
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(std::string(c[i].what), Facts()[i].what);
    EXPECT_EQ(c[i].value, Facts()[i].expected) << c[i].what << " (compiled as C)";
  }
}

TEST(JvmpiAbi, UnionIs72BytesAndClassLoadIsLargest) {
  JVMPI_Event e{};
  EXPECT_EQ(sizeof e.u, 72u);
  EXPECT_EQ(sizeof e.u.class_load, 72u);
  EXPECT_EQ(sizeof e.u.class_load_hook, 40u);
  EXPECT_EQ(sizeof e.u.obj_alloc, 32u);
  EXPECT_EQ(sizeof e.u.thread_start, 40u);
  EXPECT_EQ(sizeof e.u.heap_dump, 40u);
  EXPECT_EQ(sizeof e.u.compiled_method_load, 32u);
  EXPECT_EQ(sizeof e.u.instruction, 24u);
  EXPECT_EQ(sizeof e.u.monitor_dump, 40u);
  EXPECT_EQ(sizeof e.u.gc_info, 24u);
  EXPECT_EQ(sizeof e.u.object_dump, 16u);
}

// The types of the table's slots: an agent calls through them with these argument types.
TEST(JvmpiAbi, FunctionTableSignatures) {
  using I = JVMPI_Interface;
  EXPECT_TRUE((std::is_same_v<decltype(I::version), jint>));
  EXPECT_TRUE((std::is_same_v<decltype(I::NotifyEvent), void (*)(JVMPI_Event*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::EnableEvent), jint (*)(jint, void*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::DisableEvent), jint (*)(jint, void*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RequestEvent), jint (*)(jint, void*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::GetCallTrace), void (*)(JVMPI_CallTrace*, jint)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::ProfilerExit), void (*)(jint)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RawMonitorCreate), JVMPI_RawMonitor (*)(char*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RawMonitorEnter), void (*)(JVMPI_RawMonitor)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RawMonitorExit), void (*)(JVMPI_RawMonitor)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RawMonitorWait), void (*)(JVMPI_RawMonitor, jlong)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RawMonitorNotifyAll), void (*)(JVMPI_RawMonitor)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RawMonitorDestroy), void (*)(JVMPI_RawMonitor)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::GetCurrentThreadCpuTime), jlong (*)()>));
  EXPECT_TRUE((std::is_same_v<decltype(I::SuspendThread), void (*)(JNIEnv*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::ResumeThread), void (*)(JNIEnv*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::GetThreadStatus), jint (*)(JNIEnv*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::ThreadHasRun), jboolean (*)(JNIEnv*)>));
  EXPECT_TRUE(
      (std::is_same_v<decltype(I::CreateSystemThread), jint (*)(char*, jint, void (*)(void*))>));
  EXPECT_TRUE((std::is_same_v<decltype(I::SetThreadLocalStorage), void (*)(JNIEnv*, void*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::GetThreadLocalStorage), void* (*)(JNIEnv*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::DisableGC), void (*)()>));
  EXPECT_TRUE((std::is_same_v<decltype(I::EnableGC), void (*)()>));
  EXPECT_TRUE((std::is_same_v<decltype(I::RunGC), void (*)()>));
  EXPECT_TRUE((std::is_same_v<decltype(I::GetThreadObject), jobjectID (*)(JNIEnv*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::GetMethodClass), jobjectID (*)(jmethodID)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::jobjectID2jobject), jobject (*)(jobjectID)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::jobject2jobjectID), jobjectID (*)(jobject)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::SuspendThreadList), void (*)(jint, JNIEnv**, jint*)>));
  EXPECT_TRUE((std::is_same_v<decltype(I::ResumeThreadList), void (*)(jint, JNIEnv**, jint*)>));
  JVMPI_Event e{};
  EXPECT_TRUE((std::is_same_v<decltype(e.u.class_load_hook.malloc_f), void* (*)(unsigned int)>));
  EXPECT_TRUE((std::is_same_v<decltype(e.u.heap_dump.dump_level), int>));
  EXPECT_TRUE((std::is_same_v<jvmpi_void_function_of_void, void (*)(void*)>));
}

}  // namespace
