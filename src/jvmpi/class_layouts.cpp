// SPDX-License-Identifier: Apache-2.0
#include "class_layouts.h"

#include <jvmpi.h>
#include <jvmti.h>

#include <cstring>
#include <mutex>
#include <unordered_set>

#include "class_events.h"
#include "dump_buffer.h"
#include "jvmti_access.h"
#include "object_events.h"
#include "object_ids.h"

namespace jvmpi::class_layouts {
namespace {

// A class's own fields in GetClassFields order (the order JVMTI's indexes follow).
struct LocalField {
  jint type;
  bool is_static;
  jfieldID id;
};
using LocalFields = std::vector<LocalField>;

std::mutex g_mutex;
Layouts g_cache;

jlong tag_of(jclass klass) {
  return object_ids::to_tag(object_ids::id_of(klass));
}

LocalFields local_fields(jclass klass) {
  LocalFields out;
  jint count = 0;
  JvmtiPtr<jfieldID> fields;
  if (jvmti()->GetClassFields(klass, &count, fields.out()) != JVMTI_ERROR_NONE) return out;
  out.reserve(static_cast<size_t>(count));
  for (jint i = 0; i < count; ++i) {
    JvmtiPtr<char> sig;
    jint modifiers = 0;
    jvmti()->GetFieldName(klass, fields[i], nullptr, sig.out(), nullptr);
    jvmti()->GetFieldModifiers(klass, fields[i], &modifiers);
    constexpr jint kStatic = 0x0008;
    out.push_back({type_code_of_signature(sig.get() != nullptr ? sig.get()[0] : 'L'),
                   (modifiers & kStatic) != 0, fields[i]});
  }
  return out;
}

// Every interface `klass` implements, directly or through superclasses and superinterfaces,
// each once.
void collect_interfaces(JNIEnv* jni, jclass klass, std::unordered_set<jlong>& seen,
                        std::vector<jclass>& out) {
  jint count = 0;
  JvmtiPtr<jclass> interfaces;
  if (jvmti()->GetImplementedInterfaces(klass, &count, interfaces.out()) != JVMTI_ERROR_NONE) {
    return;
  }
  for (jint i = 0; i < count; ++i) {
    if (seen.insert(tag_of(interfaces[i])).second) {
      out.push_back(interfaces[i]);
      collect_interfaces(jni, interfaces[i], seen, out);
    } else {
      jni->DeleteLocalRef(interfaces[i]);
    }
  }
}

jlong estimate_instance_size(const std::vector<Field>& fields) {
  // Object header plus fields, 8-byte aligned: only a fallback for classes with no instance.
  jlong bytes = 12;
  for (const Field& f : fields)
    bytes += f.type == JVMPI_CLASS ? 4 : static_cast<jlong>(value_size(f.type));
  return std::max<jlong>(16, (bytes + 7) / 8 * 8);
}

std::shared_ptr<const ClassLayout> compute(JNIEnv* jni, jclass klass) {
  auto layout = std::make_shared<ClassLayout>();
  JvmtiPtr<char> signature;
  jvmti()->GetClassSignature(klass, signature.out(), nullptr);
  const char* sig = signature.get() != nullptr ? signature.get() : "";
  if (sig[0] == '[') {
    layout->element_type = type_code_of_signature(sig[1]);
    if (layout->element_type == JVMPI_CLASS) {
      layout->shape = Shape::kObjectArray;
      LocalRef component(jni, object_events::component_class(jni, klass));
      if (component.get() != nullptr) {
        layout->element_class_tag = tag_of(static_cast<jclass>(component.get()));
      }
    } else {
      layout->shape = Shape::kPrimitiveArray;
    }
    return layout;
  }

  // HotSpot's own dumper makes every instance class of the boot loader a sticky-class root, and
  // nothing else; hidden classes (a '.' in the signature) live apart from the boot loader's own.
  {
    jobject loader = nullptr;
    if (jvmti()->GetClassLoader(klass, &loader) == JVMTI_ERROR_NONE) {
      layout->boot_instance_class = loader == nullptr && std::strchr(sig, '.') == nullptr;
      if (loader != nullptr) jni->DeleteLocalRef(loader);
    }
  }

  // Direct interfaces, as CLASS_LOAD counts them.
  {
    jint count = 0;
    JvmtiPtr<jclass> interfaces;
    if (jvmti()->GetImplementedInterfaces(klass, &count, interfaces.out()) == JVMTI_ERROR_NONE) {
      for (jint i = 0; i < count; ++i) {
        layout->interface_tags.push_back(tag_of(interfaces[i]));
        jni->DeleteLocalRef(interfaces[i]);
      }
    }
  }

  // The superclass chain, this class first.
  std::vector<jclass> chain{static_cast<jclass>(jni->NewLocalRef(klass))};
  jboolean is_interface = JNI_FALSE;
  jvmti()->IsInterface(klass, &is_interface);
  if (!is_interface) {
    for (jclass k = jni->GetSuperclass(klass); k != nullptr; k = jni->GetSuperclass(chain.back())) {
      chain.push_back(k);
    }
  }
  if (chain.size() > 1) layout->super_tag = tag_of(chain[1]);

  // JVMTI numbers fields with the superinterfaces' first, then each superclass's from the top,
  // then the class's own (JVMTI specification, jvmtiHeapReferenceInfoField).
  std::unordered_set<jlong> seen;
  std::vector<jclass> interfaces;
  for (jclass k : chain) collect_interfaces(jni, k, seen, interfaces);
  jint base = 0;
  for (jclass i : interfaces) {
    base += static_cast<jint>(local_fields(i).size());
    jni->DeleteLocalRef(i);
  }
  std::vector<LocalFields> fields_of(chain.size());
  std::vector<jint> offset_of(chain.size());
  for (size_t k = chain.size(); k-- > 0;) {
    fields_of[k] = local_fields(chain[k]);
    offset_of[k] = base;
    base += static_cast<jint>(fields_of[k].size());
  }
  layout->index_count = base;
  for (size_t k = 0; k < chain.size(); ++k) {
    for (size_t p = 0; p < fields_of[k].size(); ++p) {
      const LocalField& f = fields_of[k][p];
      const Field field{offset_of[k] + static_cast<jint>(p), f.type, f.id};
      if (!f.is_static) {
        layout->instance_fields.push_back(field);
      } else if (k == 0) {
        layout->static_fields.push_back(field);
      }
    }
  }
  for (jclass k : chain) jni->DeleteLocalRef(k);
  layout->instance_size_estimate = estimate_instance_size(layout->instance_fields);
  return layout;
}

}  // namespace

jint type_code_of_signature(char first) {
  switch (first) {
    case 'Z':
      return JVMPI_BOOLEAN;
    case 'B':
      return JVMPI_BYTE;
    case 'C':
      return JVMPI_CHAR;
    case 'S':
      return JVMPI_SHORT;
    case 'I':
      return JVMPI_INT;
    case 'J':
      return JVMPI_LONG;
    case 'F':
      return JVMPI_FLOAT;
    case 'D':
      return JVMPI_DOUBLE;
    default:
      return JVMPI_CLASS;
  }
}

void add(JNIEnv* jni, jclass klass, Layouts& out) {
  // A loaded but unlinked class can have instances (restored from the CDS archive): link it so
  // its fields are known.
  if (!class_events::link_class(jni, klass)) return;
  // The dump names every class by ID: the agent gets each one's CLASS_LOAD first.
  const jlong tag = object_ids::to_tag(class_events::ensure_announced(jni, klass));
  if (tag == 0 || out.count(tag) > 0) return;
  {
    std::lock_guard lock(g_mutex);
    if (auto it = g_cache.find(tag); it != g_cache.end()) {
      out.emplace(tag, it->second);
      return;
    }
  }
  auto layout = compute(jni, klass);
  std::lock_guard lock(g_mutex);
  g_cache.emplace(tag, layout);
  out.emplace(tag, std::move(layout));
}

Layouts snapshot(JNIEnv* jni) {
  Layouts out;
  jint count = 0;
  JvmtiPtr<jclass> classes;
  if (!jvmti_ok(jvmti()->GetLoadedClasses(&count, classes.out()), "GetLoadedClasses")) return out;
  for (jint i = 0; i < count; ++i) {
    LocalRef ref(jni, classes[i]);
    add(jni, classes[i], out);
  }
  return out;
}

std::shared_ptr<const ClassLayout> cached(jlong class_tag) {
  std::lock_guard lock(g_mutex);
  auto it = g_cache.find(class_tag);
  return it == g_cache.end() ? nullptr : it->second;
}

void forget(jlong class_tag) {
  std::lock_guard lock(g_mutex);
  g_cache.erase(class_tag);
}

}  // namespace jvmpi::class_layouts
