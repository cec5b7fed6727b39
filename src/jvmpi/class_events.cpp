// SPDX-License-Identifier: Apache-2.0
#include "class_events.h"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocation_events.h"
#include "cpu_sampling.h"
#include "event_gate.h"
#include "jni_reference_events.h"
#include "jvmti_access.h"
#include "line_numbers.h"
#include "method_events.h"
#include "object_ids.h"
#include "thread_events.h"

namespace jvmpi::class_events {
namespace {

std::mutex g_mutex;
// Tags of the class objects we have seen prepared, and whether CLASS_LOAD went to the agent.
std::unordered_map<jlong, bool> g_classes;

// A CLASS_LOAD event and the memory its strings and arrays live in until delivery returns.
struct ClassLoadEvent {
  JVMPI_Event event{};
  std::string name;
  JvmtiPtr<char> source;
  std::vector<JvmtiPtr<char>> strings;
  std::vector<JVMPI_Method> methods;
  std::vector<JVMPI_Field> statics;
  std::vector<JVMPI_Field> instances;

  char* keep(JvmtiPtr<char>&& s) {
    strings.push_back(std::move(s));
    return strings.back().get();
  }
};

bool build_class_load(jclass klass, jobjectID class_id, ClassLoadEvent& out) {
  JvmtiPtr<char> signature;
  if (!jvmti_ok(jvmti()->GetClassSignature(klass, signature.out(), nullptr), "GetClassSignature")) {
    return false;
  }
  out.name = external_class_name(signature.get());
  jvmti()->GetSourceFileName(klass, out.source.out());  // absent for some classes: NULL

  jint interface_count = 0;
  JvmtiPtr<jclass> interfaces;
  if (jvmti()->GetImplementedInterfaces(klass, &interface_count, interfaces.out()) !=
      JVMTI_ERROR_NONE) {
    interface_count = 0;
  }

  jint method_count = 0;
  JvmtiPtr<jmethodID> methods;
  if (!jvmti_ok(jvmti()->GetClassMethods(klass, &method_count, methods.out()), "GetClassMethods",
                JVMTI_ERROR_CLASS_NOT_PREPARED)) {
    return false;
  }
  out.methods.reserve(static_cast<size_t>(method_count));
  for (jint i = 0; i < method_count; ++i) {
    JvmtiPtr<char> name;
    JvmtiPtr<char> sig;
    if (jvmti()->GetMethodName(methods[i], name.out(), sig.out(), nullptr) != JVMTI_ERROR_NONE) {
      continue;
    }
    JVMPI_Method m{};
    m.method_name = out.keep(std::move(name));
    m.method_signature = out.keep(std::move(sig));
    line_numbers::line_range(methods[i], &m.start_lineno, &m.end_lineno);
    m.method_id = methods[i];
    out.methods.push_back(m);
  }

  jint field_count = 0;
  JvmtiPtr<jfieldID> fields;
  if (!jvmti_ok(jvmti()->GetClassFields(klass, &field_count, fields.out()), "GetClassFields",
                JVMTI_ERROR_CLASS_NOT_PREPARED)) {
    return false;
  }
  for (jint i = 0; i < field_count; ++i) {
    JvmtiPtr<char> name;
    JvmtiPtr<char> sig;
    jint modifiers = 0;
    if (jvmti()->GetFieldName(klass, fields[i], name.out(), sig.out(), nullptr) !=
            JVMTI_ERROR_NONE ||
        jvmti()->GetFieldModifiers(klass, fields[i], &modifiers) != JVMTI_ERROR_NONE) {
      continue;
    }
    JVMPI_Field f{out.keep(std::move(name)), out.keep(std::move(sig))};
    constexpr jint kStatic = 0x0008;
    ((modifiers & kStatic) != 0 ? out.statics : out.instances).push_back(f);
  }

  auto& e = out.event.u.class_load;
  out.event.event_type = JVMPI_EVENT_CLASS_LOAD;
  e.class_name = out.name.c_str();
  e.source_name = out.source.get();
  e.num_interfaces = interface_count;
  e.num_methods = static_cast<jint>(out.methods.size());
  e.methods = out.methods.data();
  e.num_static_fields = static_cast<jint>(out.statics.size());
  e.statics = out.statics.data();
  e.num_instance_fields = static_cast<jint>(out.instances.size());
  e.instances = out.instances.data();
  e.class_id = class_id;
  return true;
}

// Array classes are announced too (no methods or fields), so the element class IDs of reference
// arrays (e.g. an array of int[]) are defined; primitive classes never appear as class IDs.
bool is_announceable(jclass klass) {
  jint status = 0;
  if (jvmti()->GetClassStatus(klass, &status) != JVMTI_ERROR_NONE) return false;
  if ((status & JVMTI_CLASS_STATUS_PRIMITIVE) != 0) return false;
  return (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PREPARED)) != 0;
}

// Delivers CLASS_LOAD unless the agent already had it; the class is marked first so concurrent
// announcers (ClassPrepare on one thread, the start-up sweep on another) send it once. Returns
// whether it delivered. `closing`: the sweep just after the agent switched CLASS_LOAD off, for
// classes loaded while it was still on (announce_after_disable).
bool announce(JNIEnv* jni, jclass klass, jobjectID class_id, bool closing = false) {
  jlong tag = object_ids::to_tag(class_id);
  {
    std::lock_guard lock(g_mutex);
    bool& announced = g_classes[tag];
    if (announced || (!closing && !gate::wants(JVMPI_EVENT_CLASS_LOAD))) return false;
    announced = true;
  }
  ClassLoadEvent data;
  if (!build_class_load(klass, class_id, data)) {
    // Not describable yet (too early in start-up): the start-up sweep at VM init tries again.
    std::lock_guard lock(g_mutex);
    if (auto it = g_classes.find(tag); it != g_classes.end()) it->second = false;
    return false;
  }
  data.event.env_id = jni;
  if (closing) {
    gate::deliver_wanted(&data.event);  // switched off a moment ago, on when the class loaded
  } else {
    gate::deliver(&data.event);
  }
  return true;
}

void* allocate_for_vm(unsigned int size) {
  unsigned char* p = nullptr;
  if (jvmti()->Allocate(size, &p) != JVMTI_ERROR_NONE) return nullptr;
  return p;
}

}  // namespace

std::string external_class_name(const char* signature) {
  std::string s = signature != nullptr ? signature : "";
  if (s.size() >= 2 && s.front() == 'L' && s.back() == ';') s = s.substr(1, s.size() - 2);
  for (char& c : s) {
    if (c == '/') c = '.';
  }
  return s;
}

void JNICALL on_class_prepare(jvmtiEnv*, JNIEnv* jni, jthread thread, jclass klass) {
  // A class prepared by a thread the agent may not hear of (ended, or not yet started) is still
  // announced, as caused by no thread the agent knows.
  const bool started = thread == nullptr || thread_events::ensure_known(jni, thread);
  cpu_sampling::on_class_prepare(klass);
  jobjectID id = object_ids::id_of(klass);
  if (id == nullptr) return;
  {
    std::lock_guard lock(g_mutex);
    g_classes.try_emplace(object_ids::to_tag(id), false);
  }
  announce(started ? jni : nullptr, klass, id);
}

// One pass over the loaded classes; returns whether it linked any (which can create classes:
// the field-listing call makes the array class of java.lang.reflect.Field) or, when `closing`,
// announced any (whose handler can have loaded more).
bool announce_pass(JNIEnv* jni, bool link, bool closing = false) {
  jint count = 0;
  JvmtiPtr<jclass> classes;
  if (!jvmti_ok(jvmti()->GetLoadedClasses(&count, classes.out()), "GetLoadedClasses")) return false;
  bool linked = false;
  for (jint i = 0; i < count; ++i) {
    // GetLoadedClasses lists only classes whose definition is complete: safe to link.
    if (link && !is_announceable(classes[i])) linked = link_class(jni, classes[i]) || linked;
    if (is_announceable(classes[i])) {
      jobjectID id = object_ids::id_of(classes[i]);
      if (id != nullptr) {
        {
          std::lock_guard lock(g_mutex);
          g_classes.try_emplace(object_ids::to_tag(id), false);
        }
        if (announce(jni, classes[i], id, closing) && closing) linked = true;
      }
    }
    jni->DeleteLocalRef(classes[i]);
  }
  return linked;
}

void announce_loaded_classes(JNIEnv* jni, bool link) {
  // Linking may create classes; a class linked in one pass links nothing new in the next, so a
  // few passes settle.
  for (int pass = 0; announce_pass(jni, link) && pass < 3; ++pass) {
  }
}

bool announce_before_disable(JNIEnv* jni) {
  if (jni == nullptr || current_phase() != JVMTI_PHASE_LIVE ||
      !gate::wants(JVMPI_EVENT_CLASS_LOAD)) {
    return false;
  }
  announce_loaded_classes(jni, /*link=*/true);
  return true;
}

void announce_after_disable(JNIEnv* jni) {
  if (jni == nullptr || current_phase() != JVMTI_PHASE_LIVE) return;
  // Classes loaded between the sweep above and the switch-off (by other threads, or by the
  // agent's own CLASS_LOAD handlers during the sweep) that no ClassPrepare announced: arrays,
  // classes restored from the CDS archive. Each announcement's handler may load more: a few
  // passes, until one finds nothing new.
  for (int pass = 0; announce_pass(jni, /*link=*/true, /*closing=*/true) && pass < 4; ++pass) {
  }
}

jobjectID ensure_announced(JNIEnv* jni, jclass klass) {
  jobjectID id = object_ids::id_of(klass);
  if (id == nullptr) return id;
  const jlong tag = object_ids::to_tag(id);
  {
    std::lock_guard lock(g_mutex);
    if (auto it = g_classes.find(tag); it != g_classes.end() && it->second) return id;
  }
  if (!gate::wants(JVMPI_EVENT_CLASS_LOAD)) return id;
  // A loaded class is named before it is linked (the element class of `new Foo[n]`, a class
  // with instances in the CDS archive): it is linked now, so the agent can be told about it
  // before the event or dump that names it. Every caller passes a class whose definition is
  // complete (the class of an object or of an array's elements, or one GetLoadedClasses listed),
  // which is what makes linking it safe; also in the start phase, when GetLoadedClasses cannot
  // be asked.
  if (!is_announceable(klass)) link_class(jni, klass);
  if (is_announceable(klass)) {
    {
      std::lock_guard lock(g_mutex);
      g_classes.try_emplace(tag, false);
    }
    announce(jni, klass, id);
  }
  return id;
}

bool link_class(JNIEnv* jni, jclass klass) {
  jint status = 0;
  if (jvmti()->GetClassStatus(klass, &status) != JVMTI_ERROR_NONE) return false;
  if ((status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY)) != 0) return true;
  if ((status & JVMTI_CLASS_STATUS_PRIMITIVE) != 0) return false;
  // Early in start-up the VM is still initialising java.lang.Class itself: looking the linking
  // call up then would initialise classes out of the VM's order (and re-enter this function).
  {
    LocalRef class_class(jni, jni->GetObjectClass(klass));
    jint class_status = 0;
    if (jvmti()->GetClassStatus(static_cast<jclass>(class_class.get()), &class_status) !=
            JVMTI_ERROR_NONE ||
        (class_status & JVMTI_CLASS_STATUS_INITIALIZED) == 0) {
      return false;
    }
  }
  // A class that cannot be linked is tried once: reflection allocates, and repeated dumps of an
  // idle program must not change its heap.
  static std::mutex failed_mutex;
  static std::unordered_set<jlong> failed;
  const jlong tag = object_ids::to_tag(object_ids::id_of(klass));
  {
    std::lock_guard lock(failed_mutex);
    if (failed.count(tag) > 0) return false;
  }
  // Asking the VM for the declared fields makes it link the class (JVMTI has no call for it); it
  // runs no Java code of the class and does not initialise it. The VM's own native is called,
  // not Class.getDeclaredFields, which would keep the answer in the class's reflection cache.
  static jmethodID declared_fields = [jni, klass] {
    LocalRef class_class(jni, jni->GetObjectClass(klass));
    jmethodID m = class_class.get() == nullptr
                      ? nullptr
                      : jni->GetMethodID(static_cast<jclass>(class_class.get()),
                                         "getDeclaredFields0", "(Z)[Ljava/lang/reflect/Field;");
    if (m == nullptr) jni->ExceptionClear();
    return m;
  }();
  if (declared_fields == nullptr) return false;
  {
    // The Field objects this allocates are the runtime's, not the program's: no OBJECT_ALLOC.
    allocation_events::InternalAllocations internal;
    LocalRef fields(jni, jni->CallObjectMethod(klass, declared_fields, JNI_TRUE));
    if (jni->ExceptionCheck()) jni->ExceptionClear();
  }
  const bool prepared = jvmti()->GetClassStatus(klass, &status) == JVMTI_ERROR_NONE &&
                        (status & JVMTI_CLASS_STATUS_PREPARED) != 0;
  if (!prepared) {
    std::lock_guard lock(failed_mutex);
    failed.insert(tag);
  }
  return prepared;
}

// Whether GetLoadedClasses lists the class: only such classes may be linked (a class still being
// defined crashes the VM in the linker). Rare (requests for unlinked classes), so a plain scan.
bool is_listed_as_loaded(JNIEnv* jni, jclass klass) {
  jint count = 0;
  JvmtiPtr<jclass> classes;
  if (jvmti()->GetLoadedClasses(&count, classes.out()) != JVMTI_ERROR_NONE) return false;
  bool listed = false;
  for (jint i = 0; i < count; ++i) {
    listed = listed || jni->IsSameObject(classes[i], klass);
    jni->DeleteLocalRef(classes[i]);
  }
  return listed;
}

bool is_class_object(JNIEnv* jni, jobject object) {
  static jclass class_class = [jni] {
    LocalRef local(jni, jni->FindClass("java/lang/Class"));
    jni_reference_events::InternalScope internal;  // the runtime's own reference: not reported
    return static_cast<jclass>(local.get() != nullptr ? jni->NewGlobalRef(local.get()) : nullptr);
  }();
  return class_class != nullptr && jni->IsInstanceOf(object, class_class);
}

jint request_class_load(JNIEnv* jni, jobjectID class_id) {
  if (jni == nullptr || class_id == nullptr) return JVMPI_FAIL;
  jobject object = object_ids::object_of(jni, class_id);
  if (object == nullptr) return JVMPI_FAIL;
  LocalRef ref(jni, object);
  // Any ID may be passed here (an instance's, a primitive type's mirror): only classes are
  // described, and only classes go to the reflection call below, which crashes the VM otherwise.
  if (!is_class_object(jni, object)) return JVMPI_FAIL;
  jint status = 0;
  if (jvmti()->GetClassStatus(static_cast<jclass>(object), &status) != JVMTI_ERROR_NONE ||
      (status & JVMTI_CLASS_STATUS_PRIMITIVE) != 0) {
    return JVMPI_FAIL;
  }
  jclass klass = static_cast<jclass>(object);
  if (!is_announceable(klass) && !is_listed_as_loaded(jni, klass)) return JVMPI_FAIL;
  link_class(jni, klass);
  ClassLoadEvent data;
  if (!build_class_load(klass, class_id, data)) return JVMPI_FAIL;
  data.event.env_id = jni;
  gate::deliver_requested(&data.event);
  return JVMPI_SUCCESS;
}

void forget_announcements() {
  std::lock_guard lock(g_mutex);
  g_classes.clear();
}

std::vector<jlong> take_classes(std::vector<jlong>& freed_tags) {
  std::vector<jlong> classes;
  {
    std::lock_guard lock(g_mutex);
    if (g_classes.empty()) return classes;
    std::erase_if(freed_tags, [&classes](jlong tag) {
      if (g_classes.erase(tag) == 0) return false;
      classes.push_back(tag);
      return true;
    });
  }
  for (jlong tag : classes) {
    JVMPI_Event event{};
    event.event_type = JVMPI_EVENT_CLASS_UNLOAD;
    event.env_id = nullptr;  // unloaded by the collector, in no thread the agent knows
    event.u.class_unload.class_id = object_ids::from_tag(tag);
    gate::deliver(&event);
  }
  return classes;
}

void JNICALL on_class_file_load_hook(jvmtiEnv*, JNIEnv* jni, jclass, jobject loader, const char*,
                                     jobject, jint class_data_len, const unsigned char* class_data,
                                     jint* new_class_data_len, unsigned char** new_class_data) {
  // The agent's CLASS_LOAD_HOOK sees the class first (also when a class is retransformed, so its
  // changes survive); the runtime's own instrumentation for method events comes on top.
  const unsigned char* bytes = class_data;
  jint length = class_data_len;
  if (gate::wants(JVMPI_EVENT_CLASS_LOAD_HOOK)) {
    JVMPI_Event event{};
    event.event_type = JVMPI_EVENT_CLASS_LOAD_HOOK;
    event.env_id = jni;
    auto& e = event.u.class_load_hook;
    e.class_data = const_cast<unsigned char*>(class_data);
    e.class_data_len = class_data_len;
    e.new_class_data = e.class_data;
    e.new_class_data_len = class_data_len;
    e.malloc_f = allocate_for_vm;
    gate::deliver(&event);
    // malloc_f hands out JVMTI memory, which is what the VM frees after using the new bytes.
    if (e.new_class_data != nullptr && e.new_class_data != class_data && e.new_class_data_len > 0) {
      *new_class_data = e.new_class_data;
      *new_class_data_len = e.new_class_data_len;
      bytes = e.new_class_data;
      length = e.new_class_data_len;
    }
  }
  std::vector<unsigned char> instrumented;
  if (!method_events::instrument(jni, loader, bytes, length, instrumented)) return;
  auto* copy =
      static_cast<unsigned char*>(allocate_for_vm(static_cast<unsigned>(instrumented.size())));
  if (copy == nullptr) return;
  std::memcpy(copy, instrumented.data(), instrumented.size());
  if (bytes != class_data) jvmti()->Deallocate(const_cast<unsigned char*>(bytes));
  *new_class_data = copy;
  *new_class_data_len = static_cast<jint>(instrumented.size());
}

}  // namespace jvmpi::class_events
