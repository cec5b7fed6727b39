// SPDX-License-Identifier: Apache-2.0
// Access to the VM and our JVMTI environment, and small helpers for JVMTI-owned memory.
#pragma once

#include <jni.h>
#include <jvmti.h>

namespace jvmpi {

JavaVM* java_vm();
jvmtiEnv* jvmti();
void set_vm(JavaVM* vm, jvmtiEnv* env);

// The JNIEnv of the calling thread, or nullptr when it is not attached to the VM.
JNIEnv* current_jni_env();

// The current JVMTI phase (JVMTI_PHASE_DEAD when unknown).
jvmtiPhase current_phase();

// Logs a failed JVMTI call (except the expected `quiet` error) and returns whether it succeeded.
bool jvmti_ok(jvmtiError err, const char* what, jvmtiError quiet = JVMTI_ERROR_NONE);

// Releases memory that JVMTI allocated for us when it goes out of scope.
template <typename T>
class JvmtiPtr {
 public:
  JvmtiPtr() = default;
  JvmtiPtr(const JvmtiPtr&) = delete;
  JvmtiPtr& operator=(const JvmtiPtr&) = delete;
  JvmtiPtr(JvmtiPtr&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
  ~JvmtiPtr() { reset(); }
  T** out() {
    reset();
    return &p_;
  }
  T* get() const { return p_; }
  T& operator[](size_t i) const { return p_[i]; }
  void reset() {
    if (p_ != nullptr) jvmti()->Deallocate(reinterpret_cast<unsigned char*>(p_));
    p_ = nullptr;
  }

 private:
  T* p_ = nullptr;
};

// Deletes a JNI local reference when it goes out of scope.
class LocalRef {
 public:
  LocalRef(JNIEnv* env, jobject ref) : env_(env), ref_(ref) {}
  LocalRef(const LocalRef&) = delete;
  LocalRef& operator=(const LocalRef&) = delete;
  ~LocalRef() {
    if (ref_ != nullptr) env_->DeleteLocalRef(ref_);
  }
  jobject get() const { return ref_; }

 private:
  JNIEnv* env_;
  jobject ref_;
};

// Releases every local reference made while it lives (PushLocalFrame/PopLocalFrame): for code on
// threads that never return to Java (agent threads, the runtime's own), where nothing else would.
class LocalFrame {
 public:
  explicit LocalFrame(JNIEnv* env, jint capacity = 16)
      : env_(env != nullptr && env->PushLocalFrame(capacity) == JNI_OK ? env : nullptr) {
    if (env != nullptr && env_ == nullptr) env->ExceptionClear();  // out of memory: no frame
  }
  LocalFrame(const LocalFrame&) = delete;
  LocalFrame& operator=(const LocalFrame&) = delete;
  ~LocalFrame() {
    if (env_ != nullptr) env_->PopLocalFrame(nullptr);
  }

 private:
  JNIEnv* env_;
};

}  // namespace jvmpi
