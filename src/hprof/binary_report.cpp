// SPDX-License-Identifier: Apache-2.0
#include "binary_report.h"

#include <hprof_format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "chunk_worker.h"
#include "jvmpi_dump_reader.h"

namespace hprof::agent {

// Sends the writer's bytes to HPROF's output (a file or the net= socket). Not seekable, so the
// writer buffers each heap-dump segment (bounded) before sending it.
class OutputSink : public hprof::Sink {
 public:
  explicit OutputSink(Output& output) : output_(output) {}
  void write(const void* data, size_t size) override { output_.write(data, size); }
  void flush() override { output_.flush(); }
  bool failed() { return output_.failed(); }

 private:
  Output& output_;
};

namespace {

hprof::Id id_of(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

hprof::BasicType basic_type(const std::string& signature) {
  switch (signature.empty() ? 'L' : signature[0]) {
    case 'Z':
      return hprof::BasicType::kBoolean;
    case 'B':
      return hprof::BasicType::kByte;
    case 'C':
      return hprof::BasicType::kChar;
    case 'S':
      return hprof::BasicType::kShort;
    case 'I':
      return hprof::BasicType::kInt;
    case 'J':
      return hprof::BasicType::kLong;
    case 'F':
      return hprof::BasicType::kFloat;
    case 'D':
      return hprof::BasicType::kDouble;
    default:
      return hprof::BasicType::kObject;
  }
}

// A JVMPI dump value (big-endian primitive, native-order ID) as a format value.
hprof::Value value_at(const char* p, const std::string& signature) {
  const hprof::BasicType type = basic_type(signature);
  if (type == hprof::BasicType::kObject) return hprof::Value::of_object(id_of(read_id(p)));
  return {type, read_be(p, jvmpi_value_size(signature))};
}

}  // namespace

BinaryReport::BinaryReport() = default;
BinaryReport::~BinaryReport() = default;

// The lock for a report: waits for it, and when let go writes what Java threads deferred meanwhile.
class BinaryReport::Hold {
 public:
  explicit Hold(BinaryReport& report) : report_(report), lock_(report.mutex_) {}
  ~Hold() { report_.release(lock_); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  BinaryReport& report_;
  std::unique_lock<std::recursive_mutex> lock_;
};

void BinaryReport::event(size_t bytes, bool droppable, std::function<void()> write) {
  // A collector not reached yet (period= retries it) counts as one: nothing may wait for it.
  const bool net = output_ != nullptr && output_->net();
  {
    std::lock_guard deferred(deferred_mutex_);
    if (droppable && net && deferred_bytes_ + bytes > kDeferredLimit) {
      output_->count_dropped(bytes);
      return;
    }
    deferred_.push_back({bytes, Output::keeping_event(), std::move(write)});
    deferred_bytes_ += bytes;
  }
  std::unique_lock lock(mutex_, std::defer_lock);
  if (net) {
    // The holder (a report waiting for room, maybe) writes it when it lets go.
    if (!lock.try_lock()) return;
  } else {
    lock.lock();  // a file: writes do not wait for anybody, so neither does the lock for long
  }
  release(lock);
}

void BinaryReport::release(std::unique_lock<std::recursive_mutex>& lock) {
  for (;;) {
    // Inside this thread's open heap dump no top-level record may be written: the dump's end
    // writes them.
    if (dump_) {
      lock.unlock();
      return;
    }
    write_deferred_and_note();
    lock.unlock();
    {
      std::lock_guard deferred(deferred_mutex_);
      if (deferred_.empty()) return;
    }
    // Deferred after the last look: written here unless another holder now has the lock (it
    // looks again when it lets go).
    if (!lock.try_lock()) return;
  }
}

void BinaryReport::write_deferred_and_note() {
  std::deque<Deferred> batch;
  {
    std::lock_guard deferred(deferred_mutex_);
    batch.swap(deferred_);
    deferred_bytes_ = 0;
  }
  for (Deferred& d : batch) {
    Output::KeepScope keep(d.keep);
    d.write();
  }
  Output::KeepScope keep(false);  // the note goes to the current connection, if any
  Output::Drops totals;
  if (!writer_ || output_ == nullptr || !output_->take_drops_to_note(totals)) return;
  // The same words as format=a's DROPPED line; the totals are running totals.
  char text[160];
  std::snprintf(text, sizeof text,
                "DROPPED: %llu events (%llu bytes) while the front end was not reading",
                static_cast<unsigned long long>(totals.events),
                static_cast<unsigned long long>(totals.bytes));
  writer_->utf8(kDropsNoteId, text);
}

void BinaryReport::note_drops() {
  Hold hold(*this);  // letting go writes the note
}

void BinaryReport::begin(Output& output, const Options& options) {
  Hold hold(*this);
  output_ = &output;
  sink_ = std::make_unique<OutputSink>(output);
  hprof::WriterOptions w;
  w.version = hprof::Version::k1_0_2;
  w.id_size = 8;
  writer_ = std::make_unique<hprof::BinaryWriter>(*sink_, writer_options());
  if (options.alloc_sites) settings_flags_ |= hprof::kAllocTraces;
  if (options.cpu_samples()) settings_flags_ |= hprof::kCpuSampling;
  settings_depth_ = static_cast<uint16_t>(options.depth);
  writer_->control_settings(settings_flags_, settings_depth_);
}

hprof::WriterOptions BinaryReport::writer_options() const {
  hprof::WriterOptions w;
  w.version = hprof::Version::k1_0_2;
  w.id_size = 8;
  return w;
}

void BinaryReport::hello(const ClassTable& classes, TraceTable& traces,
                         const std::vector<ThreadInfo>& threads, const std::string& identity,
                         Output::HelloScope& hello) {
  Hold hold(*this);
  if (!writer_ || !hello.active()) return;
  // A writer of its own: the header (with this connection's time) and record times from now.
  writer_ = std::make_unique<hprof::BinaryWriter>(*sink_, writer_options());
  writer_->control_settings(settings_flags_, settings_depth_);
  // Every name by id (the order they were first written in), then the classes by serial.
  std::vector<std::pair<uint64_t, const std::string*>> names;
  names.reserve(strings_.size());
  for (const auto& [text, id] : strings_) names.emplace_back(id, &text);
  std::sort(names.begin(), names.end());
  for (const auto& [id, text] : names) writer_->utf8(id, *text);
  std::vector<std::pair<jobjectID, ClassInfo>> all = classes.all();
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.second.serial < b.second.serial; });
  announced_.clear();
  for (const auto& [id, info] : all) {
    write_load_class(info, id);
    if (info.unloaded) writer_->unload_class(info.serial);
  }
  // The threads traces and the periods to come may name (a trace's thread serial with thread=y; an
  // END THREAD): their START THREAD again, so the connection names no thread it never announced.
  for (const ThreadInfo& t : threads) write_start_thread(t.serial, t.object, t);
  // Frames get ids anew (ids are never reused, so no old one is repeated with another meaning).
  frames_.clear();
  traces.mark_all_unwritten();
  write_traces(classes, traces);
  writer_->utf8(kIdentityNoteId, identity);
  hello.send_kept_events();
}

uint64_t BinaryReport::string_id(const std::string& text) {
  auto [it, inserted] = strings_.try_emplace(text, next_id_);
  if (inserted) {
    ++next_id_;
    if (dump_) {
      held_strings_.emplace_back(it->second, text);  // no top-level record inside a dump
    } else {
      writer_->utf8(it->second, text);
    }
  }
  return it->second;
}

void BinaryReport::load_class(const ClassInfo& info, jobjectID class_id) {
  event(0, /*droppable=*/false, [this, info, class_id] {
    if (writer_) write_load_class(info, class_id);
  });
}

void BinaryReport::write_load_class(const ClassInfo& info, jobjectID class_id) {
  // Once per connection: a frame may have announced it first (see write_traces).
  if (!announced_.insert(info.serial).second) return;
  hprof::LoadClass r;
  r.class_serial = info.serial;
  r.class_id = id_of(class_id);
  r.trace_serial = info.load_trace != 0 ? info.load_trace : kEmptyTraceSerial;
  r.name_id = string_id(info.name);
  writer_->load_class(r);
}

void BinaryReport::unload_class(unsigned serial) {
  event(0, /*droppable=*/false, [this, serial] {
    if (writer_) writer_->unload_class(serial);
  });
}

void BinaryReport::start_thread(unsigned serial, jobjectID object, const ThreadInfo& info) {
  const size_t bytes = 64 + info.name.size() + info.group.size() + info.parent.size();
  event(bytes, /*droppable=*/true, [this, serial, object, info] {
    if (writer_) write_start_thread(serial, object, info);
  });
}

void BinaryReport::write_start_thread(unsigned serial, jobjectID object, const ThreadInfo& info) {
  hprof::StartThread r;
  r.thread_serial = serial;
  r.thread_id = id_of(object);
  r.trace_serial = kEmptyTraceSerial;
  r.name_id = string_id(info.name);
  r.group_name_id = string_id(info.group);
  r.parent_group_name_id = string_id(info.parent);
  writer_->start_thread(r);
}

void BinaryReport::end_thread(unsigned serial) {
  event(16, /*droppable=*/true, [this, serial] {
    if (writer_) writer_->end_thread(serial);
  });
}

void BinaryReport::traces(const ClassTable& classes, TraceTable& traces) {
  Hold hold(*this);
  if (writer_) write_traces(classes, traces);
}

void BinaryReport::write_traces(const ClassTable& classes, TraceTable& traces) {
  for (const TraceInfo& t : traces.take_unwritten()) {
    hprof::StackTrace st;
    st.trace_serial = t.serial;
    st.thread_serial = t.thread_serial;
    for (const Frame& f : t.frames) {
      const std::string key =
          std::to_string(reinterpret_cast<uintptr_t>(f.method)) + ":" + std::to_string(f.line);
      auto [it, inserted] = frames_.try_emplace(key, next_id_);
      if (inserted) {
        ++next_id_;
        const MethodInfo m = classes.method(f.method);
        hprof::StackFrame frame;
        frame.frame_id = it->second;
        // A method of no loaded class (the CPU sampler's "<unknown Java frame>.unknown_java")
        // keeps its class part in the name: class serial 0 names no class.
        const bool classless = m.class_id == nullptr && !m.class_name.empty();
        frame.method_name_id = string_id(m.name.empty() ? "<Unknown Method>"
                                         : classless    ? m.class_name + "." + m.name
                                                        : m.name);
        frame.signature_id = string_id(m.signature);
        frame.source_file_id = m.source.empty() ? 0 : string_id(m.source);
        frame.class_serial = classes.serial_of(m.class_id);
        // A class whose LOAD CLASS is still deferred (its loading thread found the lock taken)
        // or was dropped with a lost connection: announced before the frame that names it.
        if (frame.class_serial != 0 && announced_.count(frame.class_serial) == 0)
          write_load_class(classes.find(m.class_id), m.class_id);
        frame.line = f.line;
        writer_->stack_frame(frame);
      }
      st.frame_ids.push_back(it->second);
    }
    writer_->stack_trace(st);
  }
}

void BinaryReport::alloc_sites(const ClassTable& classes, const std::vector<Site>& sites,
                               const SiteCounts& totals, double cutoff, bool by_allocated) {
  Hold hold(*this);
  if (!writer_) return;
  std::vector<Site> sorted = sites;
  std::sort(sorted.begin(), sorted.end(), [by_allocated](const Site& a, const Site& b) {
    return (by_allocated ? a.counts.alloc_bytes : a.counts.live_bytes) >
           (by_allocated ? b.counts.alloc_bytes : b.counts.live_bytes);
  });
  hprof::AllocSites r;
  r.flags = by_allocated ? 0x2 : 0;
  const float cutoff_f = static_cast<float>(cutoff);
  std::memcpy(&r.cutoff, &cutoff_f, 4);
  r.total_live_bytes = static_cast<uint32_t>(totals.live_bytes);
  r.total_live_instances = static_cast<uint32_t>(totals.live_objects);
  r.total_allocated_bytes = totals.alloc_bytes;
  r.total_allocated_instances = totals.alloc_objects;
  const uint64_t total = by_allocated ? totals.alloc_bytes : totals.live_bytes;
  for (const Site& s : sorted) {
    const uint64_t self = by_allocated ? s.counts.alloc_bytes : s.counts.live_bytes;
    if (total == 0 || static_cast<double>(self) / static_cast<double>(total) < cutoff) break;
    hprof::AllocSite site;
    site.kind = static_cast<uint8_t>(s.key.type == JVMPI_NORMAL_OBJECT ? 0 : s.key.type);
    site.class_serial = s.key.type == JVMPI_NORMAL_OBJECT || s.key.type == JVMPI_CLASS
                            ? classes.serial_of(s.key.class_id)
                            : 0;
    site.trace_serial = s.key.trace;
    site.live_bytes = static_cast<uint32_t>(s.counts.live_bytes);
    site.live_instances = static_cast<uint32_t>(s.counts.live_objects);
    site.allocated_bytes = static_cast<uint32_t>(s.counts.alloc_bytes);
    site.allocated_instances = static_cast<uint32_t>(s.counts.alloc_objects);
    r.sites.push_back(site);
  }
  writer_->alloc_sites(r);
}

void BinaryReport::heap_summary(const SiteCounts& totals) {
  Hold hold(*this);
  if (!writer_) return;
  hprof::HeapSummary r;
  r.live_bytes = static_cast<uint32_t>(totals.live_bytes);
  r.live_instances = static_cast<uint32_t>(totals.live_objects);
  r.allocated_bytes = totals.alloc_bytes;
  r.allocated_instances = totals.alloc_objects;
  writer_->heap_summary(r);
}

void BinaryReport::settings_note(const std::string& text) {
  Hold hold(*this);
  if (writer_) writer_->utf8(kSettingsNoteId, text);
}

void BinaryReport::cpu_samples(const std::vector<Cost>& costs, uint64_t total) {
  Hold hold(*this);
  if (!writer_) return;
  hprof::CpuSamples r;
  r.total = static_cast<uint32_t>(total);
  for (const Cost& c : costs) {
    r.traces.push_back({static_cast<uint32_t>(c.count), c.trace});
  }
  writer_->cpu_samples(r);
}

void BinaryReport::cpu_sampler_note(const std::string& text) {
  Hold hold(*this);
  if (!writer_) return;
  writer_->utf8(kSamplerNoteId, text);
}

void BinaryReport::note(uint64_t reserved_id, const std::string& text) {
  Hold hold(*this);
  if (!writer_) return;
  writer_->utf8(reserved_id, text);
}

// One heap dump being converted: JVMPI records in, HPROF sub-records out.
class BinaryReport::HeapDump {
 public:
  HeapDump(BinaryReport& report, int level, const ClassTable& classes, const ThreadTable& threads,
           const AllocationSites& sites)
      : report_(report), level_(level), classes_(classes), threads_(threads), sites_(sites) {
    for (auto& [id, info] : classes.all()) add_class_info(id, std::move(info));
    // Readers (VisualVM's among them) expect a dump's segments back to back, so every UTF8 record
    // the class dumps name is written before the first segment.
    for (const auto& [id, info] : info_of_) intern_field_names(info);
    heap_.emplace(report_.writer_->begin_heap_dump());
    for (const auto& [env, info] : threads.live()) {
      if (info.object != nullptr) heap_->root_thread_object(id_of(info.object), info.serial, 0);
    }
    visitor_.root = [this](const DumpRoot& r) { root(r); };
    visitor_.klass = [this](const DumpClass& k) { klass(k); };
    visitor_.instance = [this](const DumpInstance& i) { instance(i); };
    visitor_.object_array = [this](const DumpObjectArray& a) { object_array(a); };
    visitor_.primitive_array = [this](const DumpPrimitiveArray& a) { primitive_array(a); };
    traced_objects_.instance = [this](const DumpInstance& i) { traced_.push_back(i.id); };
    traced_objects_.object_array = [this](const DumpObjectArray& a) { traced_.push_back(a.id); };
    traced_objects_.primitive_array = [this](const DumpPrimitiveArray& a) {
      traced_.push_back(a.id);
    };
  }

  void add_classes(const JVMPIExt_DumpClass* classes, jint count) {
    worker_.wait_idle();  // the records before these classes are converted with what was known
    bool unknown = false;
    for (jint i = 0; i < count; ++i) {
      super_of_[classes[i].class_id] = classes[i].super_id;
      fields_of_.erase(classes[i].class_id);
      copies_.erase(classes[i].class_id);
      last_copy_ = nullptr;
      if (info_of_.count(classes[i].class_id) == 0) unknown = true;
    }
    if (!unknown) return;
    // Classes announced while the dump was taken (their CLASS_LOAD came just now).
    for (auto& [id, info] : classes_.all()) {
      if (info_of_.count(id) > 0) continue;
      intern_field_names(info);
      add_class_info(id, std::move(info));
    }
  }

  // Converts and writes the records on the worker's thread, in order: the heap walk that made
  // them goes on meanwhile (the conversion and the file write take another CPU).
  void records(const char* begin, const char* end) { worker_.add(begin, end); }
  bool failed() { return worker_.failed(); }

  void finish() {
    worker_.finish();
    heap_->finish();
  }

 private:
  void convert(const char* begin, const char* end) {
    // The objects' allocation traces are looked up all at once first (one lock, the table's
    // memory fetched ahead), then the records are converted in the same order.
    traced_.clear();
    read_heap_dump(begin, end, level_, classes_, traced_objects_);
    traces_.resize(traced_.size());
    sites_.object_traces(traced_.data(), traced_.size(), traces_.data());
    next_trace_ = 0;
    read_heap_dump(begin, end, level_, classes_, visitor_);
  }

  void add_class_info(jobjectID id, ClassInfo info) {
    class_by_name_.emplace(info.name, id);
    info_of_.emplace(id, std::move(info));
  }

  void intern_field_names(const ClassInfo& info) {
    for (const FieldInfo& f : info.statics) report_.string_id(f.name);
    for (const FieldInfo& f : info.instances) report_.string_id(f.name);
  }

  // An instance's fields in its record's order: its class's own first, then the superclass's.
  // Worked out once per class.
  const std::vector<const FieldInfo*>& instance_fields(jobjectID klass) {
    auto [it, inserted] = fields_of_.try_emplace(klass);
    if (inserted) {
      for (jobjectID k = klass; k != nullptr;) {
        auto info = info_of_.find(k);
        if (info == info_of_.end()) break;
        for (const FieldInfo& f : info->second.instances) it->second.push_back(&f);
        auto super = super_of_.find(k);
        k = super == super_of_.end() ? nullptr : super->second;
      }
    }
    return it->second;
  }

  // The objects of the records being converted come in the order records() looked them up.
  unsigned trace_of(jobjectID id) {
    if (next_trace_ < traced_.size() && traced_[next_trace_] == id) return traces_[next_trace_++];
    unsigned trace = 0;
    jint size = 0;
    return sites_.object_info(id, &trace, &size) ? trace : 0u;
  }

  void root(const DumpRoot& r) {
    const hprof::Id object = id_of(r.object);
    const uint32_t thread = threads_.serial_of(static_cast<JNIEnv*>(r.extra));
    switch (r.kind) {
      case JVMPI_GC_ROOT_JNI_GLOBAL:
        heap_->root_jni_global(object, id_of(r.extra));
        break;
      case JVMPI_GC_ROOT_JNI_LOCAL:
        heap_->root_jni_local(object, thread, r.frame);
        break;
      case JVMPI_GC_ROOT_JAVA_FRAME:
        heap_->root_java_frame(object, thread, r.frame);
        break;
      case JVMPI_GC_ROOT_NATIVE_STACK:
        heap_->root_native_stack(object, thread);
        break;
      case JVMPI_GC_ROOT_STICKY_CLASS:
        heap_->root_sticky_class(object);
        break;
      case JVMPI_GC_ROOT_THREAD_BLOCK:
        heap_->root_thread_block(object, thread);
        break;
      case JVMPI_GC_ROOT_MONITOR_USED:
        heap_->root_monitor_used(object);
        break;
      default:
        heap_->root_unknown(object);
        break;
    }
  }

  void klass(const DumpClass& k) {
    super_of_.try_emplace(k.id, k.super);
    hprof::ClassDump c;
    c.class_id = id_of(k.id);
    c.super_id = id_of(k.super);
    c.loader_id = id_of(k.loader);
    c.signers_id = id_of(k.signers);
    c.protection_domain_id = id_of(k.domain);
    // As HPROF counts it: the bytes of an instance's field values, references as IDs.
    uint32_t size = 0;
    for (const FieldInfo* f : instance_fields(k.id)) {
      size += basic_type(f->signature) == hprof::BasicType::kObject
                  ? 8u
                  : static_cast<uint32_t>(jvmpi_value_size(f->signature));
    }
    c.instance_size = size;
    for (const auto& [index, value] : k.constant_pool) {
      c.constant_pool.push_back({index, hprof::Value::of_object(id_of(value))});
    }
    auto it = info_of_.find(k.id);
    if (it != info_of_.end()) {
      size_t s = 0;
      for (const FieldInfo& f : it->second.statics) {
        if (s >= k.static_values.size()) break;
        c.statics.push_back(
            {report_.string_id(f.name), value_at(k.static_values[s++], f.signature)});
      }
      for (const FieldInfo& f : it->second.instances) {
        c.fields.push_back({report_.string_id(f.name), basic_type(f.signature)});
      }
    }
    heap_->class_dump(c);
  }

  void instance(const DumpInstance& i) {
    const InstanceCopy& copy = instance_copy(i.class_id);
    if (i.length >= copy.bytes) {
      // Every field is there: JVMPI's values are HPROF's (big-endian primitives of the same
      // sizes, 8-byte IDs) but for the IDs' byte order, so they are copied and the IDs swapped.
      values_.assign(i.values, i.values + copy.bytes);
      for (uint32_t offset : copy.ids) {
        uint64_t id;
        std::memcpy(&id, values_.data() + offset, sizeof id);
        id = __builtin_bswap64(id);
        std::memcpy(values_.data() + offset, &id, sizeof id);
      }
    } else {
      values_.clear();
      size_t offset = 0;
      for (const FieldInfo* f : instance_fields(i.class_id)) {
        const size_t n = jvmpi_value_size(f->signature);
        if (offset + n > i.length) break;
        hprof::append_value(values_, value_at(i.values + offset, f->signature), 8);
        offset += n;
      }
    }
    heap_->instance_dump(id_of(i.id), trace_of(i.id), id_of(i.class_id), values_);
  }

  // How an instance's JVMPI values become HPROF's: their size and where the IDs are. Worked out
  // once per class; consecutive instances are mostly of one class, so the last is kept at hand.
  struct InstanceCopy {
    uint32_t bytes = 0;
    std::vector<uint32_t> ids;
  };
  static_assert(sizeof(void*) == 8, "JVMPI IDs and HPROF's 8-byte IDs have one size");
  const InstanceCopy& instance_copy(jobjectID klass) {
    if (klass == last_copy_class_ && last_copy_ != nullptr) return *last_copy_;
    auto [it, inserted] = copies_.try_emplace(klass);
    if (inserted) {
      for (const FieldInfo* f : instance_fields(klass)) {
        if (basic_type(f->signature) == hprof::BasicType::kObject)
          it->second.ids.push_back(it->second.bytes);
        it->second.bytes += static_cast<uint32_t>(jvmpi_value_size(f->signature));
      }
    }
    last_copy_class_ = klass;
    last_copy_ = &it->second;
    return it->second;
  }

  void object_array(const DumpObjectArray& a) {
    elements_.clear();
    elements_.reserve(a.elements.size());
    for (jobjectID e : a.elements) elements_.push_back(id_of(e));
    const jobjectID element_class = a.element_class;
    auto array_class = array_class_of_.find(element_class);
    if (array_class == array_class_of_.end()) {
      auto info = element_class != nullptr ? info_of_.find(element_class) : info_of_.end();
      const std::string element =
          info != info_of_.end() ? info->second.name : std::string("java.lang.Object");
      auto named = class_by_name_.find(element + "[]");
      array_class =
          array_class_of_
              .emplace(element_class, named != class_by_name_.end() ? id_of(named->second) : 0)
              .first;
    }
    heap_->obj_array_dump(id_of(a.id), trace_of(a.id), array_class->second, elements_);
  }

  void primitive_array(const DumpPrimitiveArray& a) {
    heap_->prim_array_dump(id_of(a.id), trace_of(a.id), static_cast<hprof::BasicType>(a.type),
                           a.values, a.values != nullptr ? a.count : 0, hprof::ByteOrder::kBig);
  }

  BinaryReport& report_;
  const int level_;
  const ClassTable& classes_;
  const ThreadTable& threads_;
  const AllocationSites& sites_;
  std::optional<hprof::HeapDumpWriter> heap_;
  DumpVisitor visitor_;
  DumpVisitor traced_objects_;     // collects the objects of a batch of records
  std::vector<jobjectID> traced_;  // those objects, in record order
  std::vector<unsigned> traces_;   // their allocation traces
  size_t next_trace_ = 0;          // the next object trace_of meets
  std::unordered_map<jobjectID, jobjectID> super_of_;
  std::unordered_map<std::string, jobjectID> class_by_name_;
  std::unordered_map<jobjectID, ClassInfo> info_of_;
  std::unordered_map<jobjectID, std::vector<const FieldInfo*>> fields_of_;
  std::unordered_map<jobjectID, hprof::Id> array_class_of_;  // by element class
  std::unordered_map<jobjectID, InstanceCopy> copies_;
  jobjectID last_copy_class_ = nullptr;
  const InstanceCopy* last_copy_ = nullptr;
  std::vector<uint8_t> values_;
  std::vector<hprof::Id> elements_;
  // Last: made after everything its thread uses, and stopped (converting what it holds) before
  // any of it goes.
  ChunkWorker worker_{[this](const char* begin, const char* end) { convert(begin, end); }};
};

void BinaryReport::begin_heap_dump(int level, const ClassTable& classes, const ThreadTable& threads,
                                   const AllocationSites& sites) {
  mutex_.lock();  // until end_heap_dump
  if (writer_) dump_ = std::make_unique<HeapDump>(*this, level, classes, threads, sites);
}

void BinaryReport::heap_dump_classes(const JVMPIExt_DumpClass* classes, jint count) {
  Hold hold(*this);
  if (dump_) dump_->add_classes(classes, count);
}

bool BinaryReport::heap_dump_records(const char* begin, const char* end) {
  // No lock: the thread that opened the dump holds it, and a streamed dump's chunks come on the
  // VM thread that walks the heap while that thread waits for the walk (taking the lock here
  // would deadlock). Every other writer waits for the lock meanwhile.
  if (!dump_) return false;
  dump_->records(begin, end);
  return !sink_->failed() && !dump_->failed();
}

void BinaryReport::end_heap_dump() {
  std::unique_lock lock(mutex_, std::adopt_lock);  // taken by begin_heap_dump
  if (dump_) dump_->finish();
  dump_.reset();
  for (const auto& [id, text] : held_strings_) writer_->utf8(id, text);
  held_strings_.clear();
  release(lock);  // and the events other threads deferred during the dump
}

void BinaryReport::heap_dump(const JVMPI_Event& dump, const ClassTable& classes,
                             const ThreadTable& threads, const AllocationSites& sites) {
  const auto& d = dump.u.heap_dump;
  // The superclasses, from the dump's class records, before the instances that need them.
  std::vector<JVMPIExt_DumpClass> supers;
  DumpVisitor first;
  first.klass = [&](const DumpClass& k) { supers.push_back({k.id, k.super, 0}); };
  read_heap_dump(d.begin, d.end, d.dump_level, classes, first);
  begin_heap_dump(d.dump_level, classes, threads, sites);
  heap_dump_classes(supers.data(), static_cast<jint>(supers.size()));
  heap_dump_records(d.begin, d.end);
  end_heap_dump();
}

void BinaryReport::flush() {
  Hold hold(*this);
  if (writer_) writer_->flush();
}

}  // namespace hprof::agent
