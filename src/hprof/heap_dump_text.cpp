// SPDX-License-Identifier: Apache-2.0
#include "heap_dump_text.h"

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <unordered_map>

#include "jvmpi_dump_reader.h"
#include "text_report.h"

namespace hprof::agent {
namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

// "\tname\t<hex>", with a second tab for short names so the values line up.
std::string field_line(const std::string& name, jobjectID value) {
  return "\t" + name + (name.size() < 8 ? "\t\t" : "\t") + hex(value) + "\n";
}

}  // namespace

struct TextHeapDump::State {
  static constexpr size_t kChunk = 1 << 20;

  State(int level_in, const ClassTable& classes_in, const ThreadTable& threads_in,
        const AllocationSites& sites_in, std::function<void(const std::string&)> write_in)
      : level(level_in),
        classes(classes_in),
        threads(threads_in),
        sites(sites_in),
        write(std::move(write_in)) {
    const SiteCounts totals = sites.totals();
    std::snprintf(line, sizeof line, "HEAP DUMP BEGIN (%" PRIu64 " objects, %" PRIu64 " bytes) ",
                  totals.live_objects, totals.live_bytes);
    out += line + text::now_ctime();
    // One <thread> root per live thread, as JDK 8 wrote them from its thread table.
    for (const auto& [env, info] : threads.live()) {
      if (info.object == nullptr) continue;
      std::snprintf(line, sizeof line, "ROOT %s (kind=<thread>, id=%u, trace=%u)\n",
                    hex(info.object).c_str(), info.serial, kEmptyTraceSerial);
      out += line;
    }
    // Array classes by name: an ARR record names the array's own class, as JDK 8 did.
    for (const auto& [id, info] : classes.all())
      if (info.name.size() > 2 && info.name.ends_with("[]")) class_by_name.emplace(info.name, id);
    second.root = [this](const DumpRoot& r) {
      drain(kChunk);
      const std::string obj = hex(r.object);
      switch (r.kind) {
        case JVMPI_GC_ROOT_JNI_GLOBAL:
          out +=
              "ROOT " + obj + " (kind=<JNI global ref>, id=" + hex(r.extra) + ", trace=300000)\n";
          break;
        case JVMPI_GC_ROOT_JNI_LOCAL:
          std::snprintf(line, sizeof line, "ROOT %s (kind=<JNI local ref>, thread=%u, frame=%d)\n",
                        obj.c_str(), threads.serial_of(static_cast<JNIEnv*>(r.extra)),
                        static_cast<int>(r.frame));
          out += line;
          break;
        case JVMPI_GC_ROOT_JAVA_FRAME:
          std::snprintf(line, sizeof line, "ROOT %s (kind=<Java stack>, thread=%u, frame=%d)\n",
                        obj.c_str(), threads.serial_of(static_cast<JNIEnv*>(r.extra)),
                        static_cast<int>(r.frame));
          out += line;
          break;
        case JVMPI_GC_ROOT_NATIVE_STACK:
          std::snprintf(line, sizeof line, "ROOT %s (kind=<native stack>, thread=%u)\n",
                        obj.c_str(), threads.serial_of(static_cast<JNIEnv*>(r.extra)));
          out += line;
          break;
        case JVMPI_GC_ROOT_STICKY_CLASS:
          out += "ROOT " + obj + " (kind=<system class>, name=" + classes.name_of(r.object) + ")\n";
          break;
        case JVMPI_GC_ROOT_THREAD_BLOCK:
          std::snprintf(line, sizeof line, "ROOT %s (kind=<thread block>, thread=%u)\n",
                        obj.c_str(), threads.serial_of(static_cast<JNIEnv*>(r.extra)));
          out += line;
          break;
        case JVMPI_GC_ROOT_MONITOR_USED:
          out += "ROOT " + obj + " (kind=<busy monitor>)\n";
          break;
        default:
          out += "ROOT " + obj + " (kind=<unknown>)\n";
          break;
      }
    };
    second.instance = [this](const DumpInstance& i) {
      drain(kChunk);
      unsigned trace = 0;
      uint32_t size = 0;
      auto sz = super_and_size.find(i.class_id);
      trace_and_size(i.id, sz != super_and_size.end() ? sz->second.second : i.length, &trace,
                     &size);
      std::snprintf(line, sizeof line, "OBJ %s (sz=%u, trace=%u, class=%s@%s)\n", hex(i.id).c_str(),
                    size, trace, classes.name_of(i.class_id).c_str(), hex(i.class_id).c_str());
      out += line;
      // Values are the class's own fields, then its superclass's, and so on up.
      size_t offset = 0;
      for (jobjectID k = i.class_id; k != nullptr && offset < i.length;) {
        const ClassInfo info = classes.find(k);
        for (const FieldInfo& f : info.instances) {
          const size_t n = jvmpi_value_size(f.signature);
          if (offset + n > i.length) break;
          if ((f.signature[0] == 'L' || f.signature[0] == '[')) {
            const jobjectID v = read_id(i.values + offset);
            if (v != nullptr) out += field_line(f.name, v);
          }
          offset += n;
        }
        auto it = super_and_size.find(k);
        k = it == super_and_size.end() ? nullptr : it->second.first;
      }
    };
    second.object_array = [this](const DumpObjectArray& a) {
      drain(kChunk);
      unsigned trace = 0;
      uint32_t tracked_size = 0;
      trace_and_size(a.id, 0, &trace, &tracked_size);
      // JDK 8's sz of an array: its elements' bytes, no header (references at 4 bytes, the size of
      // JDK 8 HPROF's IDs and of compressed references).
      const auto size = static_cast<uint32_t>(4 * a.elements.size());
      const std::string element = a.element_class != nullptr ? classes.name_of(a.element_class)
                                                             : std::string("java.lang.Object");
      auto array_class = class_by_name.find(element + "[]");
      std::snprintf(
          line, sizeof line, "ARR %s (sz=%u, trace=%u, nelems=%zu, elem type=%s[]@%s)\n",
          hex(a.id).c_str(), size, trace, a.elements.size(), element.c_str(),
          hex(array_class != class_by_name.end() ? array_class->second : nullptr).c_str());
      out += line;
      for (size_t k = 0; k < a.elements.size(); ++k) {
        if (a.elements[k] != nullptr) {
          out += "\t[" + std::to_string(k) + "]\t\t" + hex(a.elements[k]) + "\n";
        }
      }
    };
    second.primitive_array = [this](const DumpPrimitiveArray& a) {
      drain(kChunk);
      unsigned trace = 0;
      uint32_t tracked_size = 0;
      trace_and_size(a.id, 0, &trace, &tracked_size);
      const uint32_t size =
          a.count * static_cast<uint32_t>(primitive_size(static_cast<uint8_t>(a.type)));
      std::snprintf(line, sizeof line, "ARR %s (sz=%u, trace=%u, nelems=%u, elem type=%s)\n",
                    hex(a.id).c_str(), size, trace, a.count,
                    text::primitive_array_name(a.type).c_str());
      out += line;
    };
    second.klass = [this](const DumpClass& k) {
      const ClassInfo info = classes.find(k.id);
      class_text +=
          "CLS " + hex(k.id) + " (name=" + (info.serial ? info.name : "<Unknown Class>") +
          ", trace=" + std::to_string(info.load_trace != 0 ? info.load_trace : kEmptyTraceSerial) +
          ")\n";
      if (k.super) class_text += "\tsuper\t\t" + hex(k.super) + "\n";
      if (k.loader) class_text += "\tloader\t\t" + hex(k.loader) + "\n";
      if (k.signers) class_text += "\tsigners\t\t" + hex(k.signers) + "\n";
      if (k.domain) class_text += "\tdomain\t\t" + hex(k.domain) + "\n";
      size_t s = 0;
      for (const FieldInfo& f : info.statics) {
        const bool ref = f.signature[0] == 'L' || f.signature[0] == '[';
        if (level < 2 && !ref) continue;
        if (s >= k.static_values.size()) break;
        if (ref) {
          const jobjectID v = read_id(k.static_values[s]);
          if (v != nullptr) class_text += "\tstatic " + f.name + "\t" + hex(v) + "\n";
        }
        ++s;
      }
      for (const auto& [index, value] : k.constant_pool) {
        if (value != nullptr) {
          class_text += "\tconstant pool entry " + std::to_string(index) + "\t" + hex(value) + "\n";
        }
      }
    };
  }

  void drain(size_t above) {
    if (out.size() > above) {
      write(out);
      out.clear();
    }
  }

  void trace_and_size(jobjectID id, uint32_t fallback, unsigned* trace, uint32_t* size) {
    jint tracked_size = 0;
    if (sites.object_info(id, trace, &tracked_size)) {
      *size = static_cast<uint32_t>(tracked_size);
    } else {
      *trace = kEmptyTraceSerial;
      *size = fallback;
    }
  }

  const int level;
  const ClassTable& classes;
  const ThreadTable& threads;
  const AllocationSites& sites;
  const std::function<void(const std::string&)> write;
  std::string out;
  char line[512];
  // The superclass and instance size of each class, for the instances' field lists.
  std::unordered_map<jobjectID, std::pair<jobjectID, uint32_t>> super_and_size;
  std::unordered_map<std::string, jobjectID> class_by_name;
  std::string class_text;
  DumpVisitor second;
  bool complete = true;
};

TextHeapDump::TextHeapDump(int level, const ClassTable& classes, const ThreadTable& threads,
                           const AllocationSites& sites,
                           std::function<void(const std::string&)> write)
    : state_(std::make_unique<State>(level, classes, threads, sites, std::move(write))) {}

TextHeapDump::~TextHeapDump() = default;

void TextHeapDump::add_class(jobjectID id, jobjectID super, uint32_t instance_size) {
  state_->super_and_size.try_emplace(id, super, instance_size);
}

void TextHeapDump::records(const char* begin, const char* end) {
  if (!read_heap_dump(begin, end, state_->level, state_->classes, state_->second)) {
    state_->complete = false;
  }
}

void TextHeapDump::finish() {
  State& s = *state_;
  if (!s.complete) s.out += "<heap dump incomplete: malformed record>\n";
  s.drain(0);
  s.write(s.class_text);
  s.write("HEAP DUMP END\n");
}

void heap_dump_text(const JVMPI_Event& dump, const ClassTable& classes, const ThreadTable& threads,
                    const AllocationSites& sites,
                    const std::function<void(const std::string&)>& write) {
  const auto& d = dump.u.heap_dump;
  TextHeapDump text(d.dump_level, classes, threads, sites, write);
  // The class records come last: their superclasses and sizes are read first.
  DumpVisitor first;
  first.klass = [&](const DumpClass& k) { text.add_class(k.id, k.super, k.instance_size); };
  read_heap_dump(d.begin, d.end, d.dump_level, classes, first);
  text.records(d.begin, d.end);
  text.finish();
}

}  // namespace hprof::agent
