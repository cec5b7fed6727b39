// SPDX-License-Identifier: Apache-2.0
#include "method_events.h"

#include <bci.h>
#include <dlfcn.h>
#include <jvmpi.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "event_gate.h"
#include "hook_scope.h"
#include "instrumented_classes.h"
#include "instrumented_methods.h"
#include "jvmti_access.h"
#include "known_methods.h"
#include "line_numbers.h"
#include "log.h"
#include "monitor_exit_events.h"
#include "nan_constants.h"
#include "object_ids.h"
#include "thread_events.h"

namespace jvmpi::method_events {
namespace {

constexpr const char* kTrackerClass = "jvmpi/Tracker";

// What instrumented code must call, from the events the agent has enabled.
struct Hooks {
  bool entry_exit = false;
  bool receiver = false;
  bool instructions = false;
  bool monitor_exits = false;
  bool operator==(const Hooks&) const = default;
  bool any() const { return entry_exit || instructions || monitor_exits; }
};

Hooks wanted_hooks() {
  Hooks h;
  h.receiver = gate::is_enabled(JVMPI_EVENT_METHOD_ENTRY2);
  h.entry_exit = h.receiver || gate::is_enabled(JVMPI_EVENT_METHOD_ENTRY) ||
                 gate::is_enabled(JVMPI_EVENT_METHOD_EXIT);
  h.instructions = gate::is_enabled(JVMPI_EVENT_INSTRUCTION_START);
  h.monitor_exits = gate::is_enabled(JVMPI_EVENT_MONITOR_CONTENDED_EXIT);
  return h;
}

// Class numbers index a two-level table of atomic pointers, so the hooks find their class
// without a lock. An entry lives as long as code instrumented with its number may run: for the
// whole run when the runtime started with the VM; when attached, until a session after the detach
// that gave every class its original code back (release_instrumented_classes).
constexpr size_t kChunk = 4096;
constexpr size_t kChunks = 1024;
std::array<std::atomic<std::atomic<InstrumentedMethods*>*>, kChunks> g_table{};
std::atomic<uint32_t> g_next_class_number{1};
std::mutex g_table_mutex;
// Where the entries live, under g_table_mutex: this session's arena, and the one of the session
// before, kept until the next detach. Never destroyed: class-file hooks may run while the process
// exits.
BlockArena* g_arena = new BlockArena;
BlockArena* g_retired_arena = nullptr;

// Builds the entry of class `number` in this session's arena and publishes it; false when there is
// no room for it (the class then keeps its code).
bool store(uint32_t number, const std::vector<bci::MethodInfo>& methods) {
  const size_t chunk = number / kChunk;
  if (chunk >= kChunks) return false;
  std::lock_guard lock(g_table_mutex);
  auto* slots = g_table[chunk].load();
  if (slots == nullptr) {
    slots = new std::atomic<InstrumentedMethods*>[kChunk]();
    g_table[chunk].store(slots);
  }
  InstrumentedMethods* c = InstrumentedMethods::create(*g_arena, methods);
  if (c == nullptr) return false;
  slots[number % kChunk].store(c, std::memory_order_release);
  return true;
}

InstrumentedMethods* find(jint number) {
  if (number < 0) return nullptr;
  const size_t chunk = static_cast<size_t>(number) / kChunk;
  if (chunk >= kChunks) return nullptr;
  auto* slots = g_table[chunk].load(std::memory_order_acquire);
  return slots == nullptr ? nullptr : slots[number % kChunk].load(std::memory_order_acquire);
}

std::atomic<bool> g_engaged{false};
// Set once the runtime was attached to a running VM: from then on classes with NaN constants are
// neither instrumented nor retransformed (see keep_nan_classes_out in method_events.h).
std::atomic<bool> g_nan_classes_out{false};
std::mutex g_apply_mutex;
Hooks g_applied;  // what loaded classes were last instrumented with; under g_apply_mutex
jobject g_platform_loader = nullptr;  // global reference

// The jmethodID of the instrumented method whose hook is running: the frame below the native.
jmethodID method_of(jint class_number, jint method_index) {
  InstrumentedMethods* c = find(class_number);
  if (c == nullptr || method_index < 0 || static_cast<size_t>(method_index) >= c->size()) {
    return nullptr;
  }
  const auto method = static_cast<size_t>(method_index);
  std::atomic<jmethodID>& slot = c->id(method);
  jmethodID id = slot.load(std::memory_order_acquire);
  if (id != nullptr) return id;
  jlocation location = 0;
  if (jvmti()->GetFrameLocation(nullptr, 1, &id, &location) != JVMTI_ERROR_NONE) return nullptr;
  JvmtiPtr<char> name;
  JvmtiPtr<char> signature;
  if (jvmti()->GetMethodName(id, name.out(), signature.out(), nullptr) != JVMTI_ERROR_NONE ||
      c->name(method) != name.get() || c->descriptor(method) != signature.get()) {
    return nullptr;  // not the method the hook was injected into: report nothing
  }
  slot.store(id, std::memory_order_release);
  return id;
}

// Sends a method event the caller has just found wanted (gate::wants).
void send_method(JNIEnv* env, jint type, jmethodID method, jobjectID receiver) {
  // Only the fields the event type defines are set: zeroing the whole union (a `rep stos`) was the
  // largest single cost of a method event.
  JVMPI_Event event;
  event.event_type = type;
  event.env_id = env;
  if (type == JVMPI_EVENT_METHOD_ENTRY2) {
    event.u.method_entry2.method_id = method;
    event.u.method_entry2.obj_id = receiver;
  } else {
    event.u.method.method_id = method;
  }
  gate::deliver_wanted(&event);
}

// Runs on every call of an instrumented method, so the checks come cheapest first. The hook of
// static methods passes no receiver (and METHOD_ENTRY2 then carries no object ID).
void JNICALL hook_method_entry_with_receiver(JNIEnv* env, jclass, jint class_number,
                                             jint method_index, jobject receiver) {
  HookScope scope;
  if (!scope.entered()) return;
  const bool entry = gate::wants(JVMPI_EVENT_METHOD_ENTRY);
  const bool entry2 = gate::wants(JVMPI_EVENT_METHOD_ENTRY2);
  if (!entry && !entry2) return;
  jmethodID method = method_of(class_number, method_index);
  if (method == nullptr) return;
  if (!thread_events::ensure_known(env)) return;
  if (entry) send_method(env, JVMPI_EVENT_METHOD_ENTRY, method, nullptr);
  if (entry2) {
    send_method(env, JVMPI_EVENT_METHOD_ENTRY2, method, object_ids::id_of(receiver));
  }
}

void JNICALL hook_method_entry(JNIEnv* env, jclass cls, jint class_number, jint method_index) {
  hook_method_entry_with_receiver(env, cls, class_number, method_index, nullptr);
}

void JNICALL hook_method_exit(JNIEnv* env, jclass, jint class_number, jint method_index) {
  HookScope scope;
  if (!scope.entered() || !gate::wants(JVMPI_EVENT_METHOD_EXIT)) return;
  jmethodID method = method_of(class_number, method_index);
  if (method == nullptr) return;
  if (!thread_events::ensure_known(env)) return;
  send_method(env, JVMPI_EVENT_METHOD_EXIT, method, nullptr);
}

// Builds an INSTRUCTION_START for the hook's method; `fill` sets the outcome fields.
template <typename Fill>
void deliver_instruction(JNIEnv* env, jint class_number, jint method_index, jint offset,
                         Fill fill) {
  HookScope scope;
  if (!scope.entered() || !gate::wants(JVMPI_EVENT_INSTRUCTION_START)) return;
  jmethodID method = method_of(class_number, method_index);
  if (method == nullptr) return;
  if (!thread_events::ensure_known(env)) return;
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_INSTRUCTION_START;
  event.env_id = env;
  event.u.instruction.method_id = method;
  event.u.instruction.offset = offset;
  fill(event);
  gate::deliver(&event);
}

void JNICALL hook_instruction(JNIEnv* env, jclass, jint class_number, jint method_index,
                              jint offset) {
  deliver_instruction(env, class_number, method_index, offset, [](JVMPI_Event&) {});
}

void JNICALL hook_instruction_if(JNIEnv* env, jclass, jint class_number, jint method_index,
                                 jint offset, jboolean taken) {
  deliver_instruction(env, class_number, method_index, offset,
                      [taken](JVMPI_Event& e) { e.u.instruction.u.if_info.is_true = taken; });
}

void JNICALL hook_instruction_tableswitch(JNIEnv* env, jclass, jint key, jint low, jint high,
                                          jint class_number, jint method_index, jint offset) {
  deliver_instruction(env, class_number, method_index, offset, [=](JVMPI_Event& e) {
    e.u.instruction.u.tableswitch_info.key = key;
    e.u.instruction.u.tableswitch_info.low = low;
    e.u.instruction.u.tableswitch_info.hi = high;
  });
}

void JNICALL hook_instruction_lookupswitch(JNIEnv* env, jclass, jint key, jint pairs,
                                           jint class_number, jint method_index, jint offset) {
  deliver_instruction(env, class_number, method_index, offset, [=](JVMPI_Event& e) {
    jint chosen = pairs;  // the default branch
    if (InstrumentedMethods* c = find(class_number);
        c != nullptr && method_index >= 0 && static_cast<size_t>(method_index) < c->size()) {
      const int index =
          c->lookup_pair(static_cast<size_t>(method_index), static_cast<uint32_t>(offset), key);
      if (index >= 0) chosen = index;
    }
    e.u.instruction.u.lookupswitch_info.chosen_pair_index = chosen;
    e.u.instruction.u.lookupswitch_info.pairs_total = pairs;
  });
}

std::string tracker_jar_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&tracker_jar_path), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::string path = info.dli_fname;
  return path.substr(0, path.rfind('/') + 1) + "jvmpi-tracker.jar";
}

bool register_natives(JNIEnv* jni) {
  LocalRef tracker(jni, jni->FindClass(kTrackerClass));
  if (tracker.get() == nullptr) {
    jni->ExceptionClear();
    log_error("cannot load %s from the tracker jar; method events are not available",
              kTrackerClass);
    return false;
  }
  const JNINativeMethod natives[] = {
      {const_cast<char*>("methodEntry"), const_cast<char*>("(II)V"),
       reinterpret_cast<void*>(&hook_method_entry)},
      {const_cast<char*>("methodEntryWithReceiver"), const_cast<char*>("(IILjava/lang/Object;)V"),
       reinterpret_cast<void*>(&hook_method_entry_with_receiver)},
      {const_cast<char*>("methodExit"), const_cast<char*>("(II)V"),
       reinterpret_cast<void*>(&hook_method_exit)},
      {const_cast<char*>("instruction"), const_cast<char*>("(III)V"),
       reinterpret_cast<void*>(&hook_instruction)},
      {const_cast<char*>("instructionIf"), const_cast<char*>("(IIIZ)V"),
       reinterpret_cast<void*>(&hook_instruction_if)},
      {const_cast<char*>("instructionTableswitch"), const_cast<char*>("(IIIIII)V"),
       reinterpret_cast<void*>(&hook_instruction_tableswitch)},
      {const_cast<char*>("instructionLookupswitch"), const_cast<char*>("(IIIII)V"),
       reinterpret_cast<void*>(&hook_instruction_lookupswitch)},
      {const_cast<char*>("monitorExitContended"), const_cast<char*>("(Ljava/lang/Object;)V"),
       reinterpret_cast<void*>(&monitor_exit_events::hook_monitor_exit)},
  };
  if (jni->RegisterNatives(static_cast<jclass>(tracker.get()), natives,
                           sizeof natives / sizeof natives[0]) != JNI_OK) {
    jni->ExceptionClear();
    log_error("cannot register the tracker's natives; method events are not available");
    return false;
  }
  monitor_exit_events::start(jni, static_cast<jclass>(tracker.get()));
  return true;
}

void remember_platform_loader(JNIEnv* jni) {
  LocalRef loader_class(jni, jni->FindClass("java/lang/ClassLoader"));
  jmethodID get =
      loader_class.get() == nullptr
          ? nullptr
          : jni->GetStaticMethodID(static_cast<jclass>(loader_class.get()),
                                   "getPlatformClassLoader", "()Ljava/lang/ClassLoader;");
  if (get == nullptr) {
    jni->ExceptionClear();
    return;
  }
  LocalRef loader(jni, jni->CallStaticObjectMethod(static_cast<jclass>(loader_class.get()), get));
  if (jni->ExceptionCheck()) jni->ExceptionClear();
  if (loader.get() != nullptr) g_platform_loader = jni->NewGlobalRef(loader.get());
}

// Instruction hooks go into application classes only: instrumenting every bytecode of the JDK
// itself would make start-up take minutes, and coverage tools measure the program's own code.
bool is_application_loader(JNIEnv* jni, jobject loader) {
  return loader != nullptr &&
         !(g_platform_loader != nullptr && jni->IsSameObject(loader, g_platform_loader));
}

// Whether the instrumenter could put one of `hooks` into the loaded class `klass`: it puts them
// only into methods with code (not abstract, not native), and instruction hooks only into
// application classes. Interfaces without default or static methods, annotation types and
// classes of native methods only therefore keep their bytes, and a retransformation would only
// make the VM build a new version of them. When the VM cannot tell, yes.
bool may_get_hooks(JNIEnv* jni, jclass klass, const Hooks& hooks) {
  if (!hooks.entry_exit && !hooks.monitor_exits) {
    jobject loader = nullptr;
    if (jvmti()->GetClassLoader(klass, &loader) != JVMTI_ERROR_NONE) return true;
    LocalRef loader_ref(jni, loader);
    if (!is_application_loader(jni, loader)) return false;
  }
  jint count = 0;
  JvmtiPtr<jmethodID> methods;
  if (jvmti()->GetClassMethods(klass, &count, methods.out()) != JVMTI_ERROR_NONE) return true;
  for (jint i = 0; i < count; ++i) {
    jint modifiers = 0;
    if (jvmti()->GetMethodModifiers(methods[i], &modifiers) != JVMTI_ERROR_NONE) return true;
    if ((modifiers & (0x0400 | 0x0100)) == 0) return true;  // neither ACC_ABSTRACT nor ACC_NATIVE
  }
  return false;
}

// Brings the loaded classes in line with the hooks the enabled events need: the class-file hook
// instruments (or, with no hooks wanted, returns the original code of) each retransformed class.
// Only classes whose code changes are retransformed: those instrumented now (their hooks come
// out or change) and those the wanted hooks would go into.
void retransform_loaded_classes(JNIEnv* jni, const Hooks& wanted) {
  known_methods::note_retransformation();
  jint count = 0;
  JvmtiPtr<jclass> classes;
  if (!jvmti_ok(jvmti()->GetLoadedClasses(&count, classes.out()), "GetLoadedClasses")) return;
  std::vector<jclass> batch;
  std::vector<bool> batch_instrumented;  // whether batch[i] ran instrumented code before
  int failures = 0;
  const bool nan_classes_out = g_nan_classes_out.load();
  auto flush = [&] {
    if (batch.empty()) return;
    // The class-file hook notes each class again that it instruments now.
    for (jclass k : batch) instrumented_classes::forget(jni, k);
    if (jvmti()->RetransformClasses(static_cast<jint>(batch.size()), batch.data()) !=
        JVMTI_ERROR_NONE) {
      // One class the VM refused fails the batch: try them one by one.
      for (size_t i = 0; i < batch.size(); ++i) {
        if (jvmti()->RetransformClasses(1, &batch[i]) == JVMTI_ERROR_NONE) continue;
        ++failures;
        // Its code is what it was: still instrumented if it was.
        if (batch_instrumented[i]) instrumented_classes::note_loaded(jni, batch[i]);
      }
    }
    batch.clear();
    batch_instrumented.clear();
  };
  for (jint i = 0; i < count; ++i) {
    jboolean modifiable = JNI_FALSE;
    if (jvmti()->IsModifiableClass(classes[i], &modifiable) == JVMTI_ERROR_NONE && modifiable) {
      if (nan_classes_out && nan_constants::in_loaded_class(classes[i])) continue;
      const bool instrumented = instrumented_classes::contains(jni, classes[i]);
      if (!instrumented && !(wanted.any() && may_get_hooks(jni, classes[i], wanted))) continue;
      batch.push_back(classes[i]);
      batch_instrumented.push_back(instrumented);
      if (batch.size() == 256) flush();
    }
  }
  flush();
  line_numbers::code_changed();
  instrumented_classes::sweep(jni);
  for (jint i = 0; i < count; ++i) jni->DeleteLocalRef(classes[i]);
  known_methods::after_retransformation(jni);
  if (failures > 0)
    log_warning("%d classes could not be retransformed for method events", failures);
}

std::atomic<bool> g_vm_dying{false};

// Whether `wanted` needs a hook that `applied` did not put in.
bool adds_hooks(const Hooks& wanted, const Hooks& applied) {
  return (wanted.entry_exit && !applied.entry_exit) || (wanted.receiver && !applied.receiver) ||
         (wanted.instructions && !applied.instructions) ||
         (wanted.monitor_exits && !applied.monitor_exits);
}

void apply(JNIEnv* jni) {
  std::lock_guard lock(g_apply_mutex);
  const Hooks wanted = wanted_hooks();
  if (wanted == g_applied) return;
  // Once the VM is dying, hooks are not taken out: a hook whose event is off delivers nothing,
  // and restoring every instrumented class costs the exit a retransformation of each, in which
  // HotSpot verifies the restored bytes and so loads classes (JDK 25: the jar and zip classes)
  // after an agent switched CLASS_LOAD off for its exit heap dump, which would then name them.
  if (g_vm_dying.load() && !adds_hooks(wanted, g_applied)) return;
  g_applied = wanted;
  retransform_loaded_classes(jni, wanted);
}

}  // namespace

bool prepare(std::string& error) {
  const std::string jar = tracker_jar_path();
  if (jar.empty() || jvmti()->AddToBootstrapClassLoaderSearch(jar.c_str()) != JVMTI_ERROR_NONE) {
    error = "cannot add the tracker jar " + jar + " to the boot class path";
    return false;
  }
  return true;
}

void start(JNIEnv* jni) {
  remember_platform_loader(jni);
  if (!register_natives(jni)) return;
  g_engaged.store(true);
  apply(jni);
}

bool instrument(JNIEnv* jni, jobject loader, const unsigned char* bytes, jint length,
                std::vector<unsigned char>& out) {
  if (!g_engaged.load()) return false;
  const Hooks hooks = wanted_hooks();
  if (!hooks.any()) return false;
  bci::InjectionOptions options;
  options.tracker_class = kTrackerClass;
  options.class_number = g_next_class_number.fetch_add(1);
  options.method_entry_exit = hooks.entry_exit;
  options.entry_with_receiver = hooks.receiver;
  options.instructions = hooks.instructions && is_application_loader(jni, loader);
  options.monitor_exits = hooks.monitor_exits;
  if (!options.method_entry_exit && !options.instructions && !options.monitor_exits) return false;
  // Loaded while attached: instrumented now, it would need a retransformation at the detach.
  if (g_nan_classes_out.load() &&
      nan_constants::in_class_file(std::span(bytes, static_cast<size_t>(length)))) {
    return false;
  }
  try {
    bci::InjectionResult result =
        bci::instrument(std::span(bytes, static_cast<size_t>(length)), options);
    if (!result.changed || !store(options.class_number, result.methods)) return false;
    instrumented_classes::note(jni, result.class_name, loader);
    out = std::move(result.class_bytes);
    return true;
  } catch (const bci::ClassFormatError& e) {
    log_warning("class not instrumented: %s", e.what());
    return false;
  }
}

void release_instrumented_classes() {
  // Called at a detach, when no hook is wanted any more (so no hook reaches find()) and every
  // class has its original code back. The entries taken out now are freed with their arena at the
  // next detach, a whole session later: a hook that read one just before the events were disabled
  // has long finished with it by then. An entry stored after this sweep (a class loaded as the
  // session ended) goes into the new arena, so it too outlives its sweep by a session.
  std::lock_guard lock(g_table_mutex);
  for (auto& chunk : g_table) {
    auto* slots = chunk.load();
    if (slots == nullptr) continue;
    for (size_t i = 0; i < kChunk; ++i) slots[i].store(nullptr);
  }
  delete g_retired_arena;
  g_retired_arena = g_arena;
  g_arena = new BlockArena;
}

void vm_dying() {
  g_vm_dying.store(true);
}

void keep_nan_classes_out() {
  g_nan_classes_out.store(true);
}

void events_changed() {
  if (!g_engaged.load()) return;  // VM init instruments what was loaded before
  if (JNIEnv* jni = current_jni_env(); jni != nullptr) apply(jni);
}

}  // namespace jvmpi::method_events
