// SPDX-License-Identifier: Apache-2.0
#include "instrumented_classes.h"

#include <jvmti.h>

#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "jvmti_access.h"

namespace jvmpi::instrumented_classes {
namespace {

// A class the hook instrumented at least once: its loader (a weak global reference; nullptr for
// the bootstrap loader) and whether its current code is instrumented. Entries stay when the
// class gets its original code back, so that the next session's notes allocate nothing: memory
// freed and allocated again with every retransformation, between the VM's own allocations of
// the same moment, would only fragment the C heap.
struct Loader {
  jweak loader;
  bool bootstrap;
  bool instrumented;
  bool seen;  // looked up by contains() since the last sweep()
};

std::mutex g_mutex;
// Class name -> the loaders defining a class of that name that was instrumented. Never
// destroyed: class-file hooks may run while the process exits.
auto* g_classes = new std::unordered_map<std::string, std::vector<Loader>>;

// The internal name of a loaded class ("Ljava/lang/String;" -> "java/lang/String").
bool name_of(jclass klass, std::string& name) {
  JvmtiPtr<char> signature;
  if (jvmti()->GetClassSignature(klass, signature.out(), nullptr) != JVMTI_ERROR_NONE) return false;
  std::string s = signature.get();
  if (s.size() < 3 || s.front() != 'L' || s.back() != ';') return false;
  name = s.substr(1, s.size() - 2);
  return true;
}

// The entry of `name` and `loader`, under the lock; nullptr when there is none.
Loader* entry(JNIEnv* jni, const std::string& name, jobject loader) {
  auto it = g_classes->find(name);
  if (it == g_classes->end()) return nullptr;
  for (Loader& l : it->second) {
    // A collected loader's reference equals nullptr: only a bootstrap entry is the bootstrap's.
    if (loader == nullptr ? l.bootstrap : !l.bootstrap && jni->IsSameObject(l.loader, loader)) {
      return &l;
    }
  }
  return nullptr;
}

// Calls `with(entry or nullptr)` for the loaded class `klass`, under the lock.
template <typename With>
void with_entry(JNIEnv* jni, jclass klass, With with) {
  std::string name;
  jobject loader = nullptr;
  if (!name_of(klass, name) || jvmti()->GetClassLoader(klass, &loader) != JVMTI_ERROR_NONE) {
    with(nullptr);
    return;
  }
  LocalRef loader_ref(jni, loader);
  std::lock_guard lock(g_mutex);
  with(entry(jni, name, loader));
}

}  // namespace

void note(JNIEnv* jni, const std::string& name, jobject loader) {
  std::lock_guard lock(g_mutex);
  if (Loader* known = entry(jni, name, loader); known != nullptr) {
    known->instrumented = true;
    return;
  }
  jweak weak = loader == nullptr ? nullptr : jni->NewWeakGlobalRef(loader);
  if (loader != nullptr && weak == nullptr) {
    jni->ExceptionClear();
    return;  // out of memory: the class is treated as not instrumented
  }
  (*g_classes)[name].push_back({weak, loader == nullptr, true, false});
}

void note_loaded(JNIEnv* jni, jclass klass) {
  std::string name;
  jobject loader = nullptr;
  if (!name_of(klass, name) || jvmti()->GetClassLoader(klass, &loader) != JVMTI_ERROR_NONE) return;
  LocalRef loader_ref(jni, loader);
  note(jni, name, loader);
}

bool contains(JNIEnv* jni, jclass klass) {
  bool found = false;
  with_entry(jni, klass, [&](Loader* l) {
    if (l == nullptr) return;
    l->seen = true;
    found = l->instrumented;
  });
  return found;
}

void forget(JNIEnv* jni, jclass klass) {
  with_entry(jni, klass, [](Loader* l) {
    if (l != nullptr) l->instrumented = false;
  });
}

void sweep(JNIEnv* jni) {
  std::lock_guard lock(g_mutex);
  for (auto it = g_classes->begin(); it != g_classes->end();) {
    std::vector<Loader>& loaders = it->second;
    std::erase_if(loaders, [jni](Loader& l) {
      const bool gone =
          (!l.bootstrap && jni->IsSameObject(l.loader, nullptr)) || (!l.instrumented && !l.seen);
      if (gone && l.loader != nullptr) jni->DeleteWeakGlobalRef(l.loader);
      l.seen = false;
      return gone;
    });
    it = loaders.empty() ? g_classes->erase(it) : std::next(it);
  }
}

}  // namespace jvmpi::instrumented_classes
