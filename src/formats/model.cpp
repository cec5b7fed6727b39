// SPDX-License-Identifier: Apache-2.0
// The in-memory model (Profile, HeapDump) built from the parser, and the decoding helpers.
#include <unordered_set>

#include "byte_io.h"
#include "hprof_format.h"
#include "reader_internal.h"

namespace hprof {

namespace {
constexpr uint64_t kInstanceKind = 0;
constexpr uint64_t kObjArrayKind = 1;
constexpr uint64_t kPrimArrayKind = 2;
constexpr int kKindShift = 62;
constexpr uint64_t kIndexMask = (uint64_t{1} << kKindShift) - 1;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}
}  // namespace

// ---- HeapDump ----

void HeapDump::build_index() {
  class_index_.clear();
  object_index_.clear();
  class_index_.reserve(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    class_index_.emplace(classes[i].class_id, static_cast<uint32_t>(i));
  }
  object_index_.reserve(instances.size() + object_arrays.size() + primitive_arrays.size());
  for (size_t i = 0; i < instances.size(); ++i) {
    object_index_.emplace(instances[i].object_id, kInstanceKind << kKindShift | i);
  }
  for (size_t i = 0; i < object_arrays.size(); ++i) {
    object_index_.emplace(object_arrays[i].array_id, kObjArrayKind << kKindShift | i);
  }
  for (size_t i = 0; i < primitive_arrays.size(); ++i) {
    object_index_.emplace(primitive_arrays[i].array_id, kPrimArrayKind << kKindShift | i);
  }
}

const ClassDump* HeapDump::find_class(Id id) const {
  auto it = class_index_.find(id);
  return it == class_index_.end() ? nullptr : &classes[it->second];
}

const InstanceDump* HeapDump::find_instance(Id id) const {
  auto it = object_index_.find(id);
  if (it == object_index_.end() || it->second >> kKindShift != kInstanceKind) return nullptr;
  return &instances[it->second & kIndexMask];
}

const ObjArrayDump* HeapDump::find_object_array(Id id) const {
  auto it = object_index_.find(id);
  if (it == object_index_.end() || it->second >> kKindShift != kObjArrayKind) return nullptr;
  return &object_arrays[it->second & kIndexMask];
}

const PrimArrayDump* HeapDump::find_primitive_array(Id id) const {
  auto it = object_index_.find(id);
  if (it == object_index_.end() || it->second >> kKindShift != kPrimArrayKind) return nullptr;
  return &primitive_arrays[it->second & kIndexMask];
}

// ---- Profile ----

std::string_view Profile::string(Id id) const {
  auto it = strings.find(id);
  return it == strings.end() ? std::string_view() : std::string_view(it->second);
}

const LoadClass* Profile::find_class(Id class_id) const {
  auto it = class_index_.find(class_id);
  return it == class_index_.end() ? nullptr : &classes[it->second];
}

const LoadClass* Profile::find_class_by_serial(uint32_t serial) const {
  auto it = serial_index_.find(serial);
  return it == serial_index_.end() ? nullptr : &classes[it->second];
}

std::string_view Profile::class_name(Id class_id) const {
  const LoadClass* c = find_class(class_id);
  return c == nullptr ? std::string_view() : string(c->name_id);
}

uint64_t Profile::offset_of(const uint8_t* p) const {
  if (storage_begin_ == nullptr || p < storage_begin_) return 0;
  return static_cast<uint64_t>(p - storage_begin_);
}

namespace detail {

class ProfileBuilder : public Visitor {
 public:
  explicit ProfileBuilder(Profile& p) : p_(p) {}

  static Profile build(std::shared_ptr<const MappedFile> file, std::string source) {
    Profile p;
    p.source = std::move(source);
    p.storage_begin_ = file->bytes().data();
    ProfileBuilder builder(p);
    parse(file->bytes(), builder, p.source);
    p.storage_ = std::move(file);
    for (HeapDump& d : p.heap_dumps) d.build_index();
    return p;
  }

  void on_header(const Header& h) override { p_.header = h; }
  void on_record(const RecordInfo& info) override {
    // Any record other than a segment closes an open 1.0.2 dump only at HEAP DUMP END; a 1.0.1
    // HEAP DUMP is complete by itself.
    if (info.tag == Tag::kHeapDump) {
      p_.heap_dumps.emplace_back();
      p_.heap_dumps.back().time = info.time;
      p_.heap_dumps.back().complete = true;
      open_ = false;
      current_ = &p_.heap_dumps.back();
    } else if (info.tag == Tag::kHeapDumpSegment && !open_) {
      p_.heap_dumps.emplace_back();
      p_.heap_dumps.back().time = info.time;
      open_ = true;
      current_ = &p_.heap_dumps.back();
    }
  }
  void on_utf8(const Utf8& r) override { p_.strings[r.id] = std::string(r.text); }
  void on_load_class(const LoadClass& r) override {
    p_.class_index_[r.class_id] = static_cast<uint32_t>(p_.classes.size());
    p_.serial_index_[r.class_serial] = static_cast<uint32_t>(p_.classes.size());
    p_.classes.push_back(r);
  }
  void on_unload_class(const UnloadClass& r) override { p_.unloaded_classes.push_back(r); }
  void on_stack_frame(const StackFrame& r) override { p_.frames.push_back(r); }
  void on_stack_trace(const StackTrace& r) override { p_.traces.push_back(r); }
  void on_alloc_sites(const AllocSites& r) override { p_.alloc_sites.push_back(r); }
  void on_heap_summary(const HeapSummary& r) override { p_.heap_summaries.push_back(r); }
  void on_start_thread(const StartThread& r) override { p_.threads.push_back(r); }
  void on_end_thread(const EndThread& r) override { p_.ended_threads.push_back(r); }
  void on_cpu_samples(const CpuSamples& r) override { p_.cpu_samples.push_back(r); }
  void on_control_settings(const ControlSettings& r) override { p_.control_settings.push_back(r); }
  void on_heap_dump_segment(const RecordInfo&) override { current_->segments++; }
  void on_heap_dump_end(const RecordInfo& info) override {
    if (!open_) {  // an empty dump
      p_.heap_dumps.emplace_back();
      p_.heap_dumps.back().time = info.time;
    }
    p_.heap_dumps.back().complete = true;
    open_ = false;
    current_ = nullptr;
  }
  void on_root(const Root& r) override { current_->roots.push_back(r); }
  void on_class_dump(const ClassDump& r) override { current_->classes.push_back(r); }
  void on_instance_dump(const InstanceDump& r) override { current_->instances.push_back(r); }
  void on_obj_array_dump(const ObjArrayDump& r) override { current_->object_arrays.push_back(r); }
  void on_prim_array_dump(const PrimArrayDump& r) override {
    current_->primitive_arrays.push_back(r);
  }

 private:
  Profile& p_;
  bool open_ = false;
  HeapDump* current_ = nullptr;  // valid from a segment's on_record to its last sub-record
};

}  // namespace detail

Profile read_file(const std::string& path) {
  return detail::ProfileBuilder::build(detail::MappedFile::open(path), path);
}

Profile read_memory(std::span<const uint8_t> data, std::string source) {
  return detail::ProfileBuilder::build(detail::MappedFile::copy_of(data), std::move(source));
}

// ---- Helpers ----

std::map<std::string, uint64_t> instance_counts(const Profile& profile, const HeapDump& dump) {
  std::unordered_map<Id, uint64_t> by_class;
  for (const InstanceDump& i : dump.instances) by_class[i.class_id]++;
  std::map<std::string, uint64_t> counts;
  for (const auto& [class_id, n] : by_class) {
    std::string_view name = profile.class_name(class_id);
    counts[name.empty() ? "<class " + hex(class_id) + ">" : std::string(name)] += n;
  }
  return counts;
}

std::vector<FieldValue> decode_fields(const Profile& profile, const HeapDump& dump,
                                      const InstanceDump& instance) {
  uint64_t at = profile.offset_of(instance.fields.data());
  auto fail = [&](const std::string& problem) -> void {
    throw FormatError(profile.source + ": offset " + std::to_string(at) + ": instance " +
                          hex(instance.object_id) + " of class " + hex(instance.class_id) + ": " +
                          problem,
                      at);
  };
  std::vector<FieldValue> out;
  std::unordered_set<Id> seen;
  size_t pos = 0;
  uint32_t id_size = profile.header.id_size;
  for (Id cls = instance.class_id; cls != 0;) {
    if (!seen.insert(cls).second) fail("superclass chain loops at class " + hex(cls));
    const ClassDump* cd = dump.find_class(cls);
    if (cd == nullptr) fail("no CLASS DUMP for class " + hex(cls));
    for (const FieldDescriptor& f : cd->fields) {
      size_t n = type_size(f.type, id_size);
      if (n > instance.fields.size() - pos) {
        fail("field data (" + std::to_string(instance.fields.size()) +
             " bytes) ends before field \"" + std::string(profile.string(f.name_id)) + "\"");
      }
      out.push_back({profile.string(f.name_id), cls,
                     Value{f.type, detail::load_be(instance.fields.data() + pos, n)}});
      pos += n;
    }
    cls = cd->super_id;
  }
  if (pos != instance.fields.size()) {
    fail(std::to_string(instance.fields.size() - pos) +
         " bytes of field data left after the last declared field");
  }
  return out;
}

std::optional<Value> field_value(const Profile& profile, const HeapDump& dump,
                                 const InstanceDump& instance, std::string_view name) {
  for (const FieldValue& f : decode_fields(profile, dump, instance)) {
    if (f.name == name) return f.value;
  }
  return std::nullopt;
}

namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf16_to_utf8(const std::vector<char16_t>& units) {
  std::string out;
  out.reserve(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    uint32_t u = units[i];
    if (u >= 0xD800 && u < 0xDC00 && i + 1 < units.size() && units[i + 1] >= 0xDC00 &&
        units[i + 1] < 0xE000) {
      append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00));
      ++i;
    } else if (u >= 0xD800 && u < 0xE000) {
      append_utf8(out, 0xFFFD);
    } else {
      append_utf8(out, u);
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> decode_string(const Profile& profile, const HeapDump& dump, Id object) {
  const InstanceDump* s = dump.find_instance(object);
  if (s == nullptr) return std::nullopt;
  std::string_view cls = profile.class_name(s->class_id);
  if (cls != "java/lang/String" && cls != "java.lang.String") return std::nullopt;
  std::optional<Value> value;
  std::optional<Value> coder;
  for (const FieldValue& f : decode_fields(profile, dump, *s)) {
    if (f.name == "value" && !value) value = f.value;
    if (f.name == "coder" && !coder) coder = f.value;
  }
  if (!value || value->type != BasicType::kObject) return std::nullopt;
  const PrimArrayDump* a = dump.find_primitive_array(value->as_object());
  if (a == nullptr) return std::nullopt;
  std::vector<char16_t> units;
  if (a->type == BasicType::kChar) {  // JDK 8: char[], written big-endian
    for (size_t i = 0; i < a->length; ++i)
      units.push_back(static_cast<char16_t>(a->element_bits(i)));
  } else if (a->type == BasicType::kByte) {
    if (!coder || coder->as_byte() == 0) {  // LATIN1
      std::string out;
      for (size_t i = 0; i < a->length; ++i) append_utf8(out, a->data[i]);
      return out;
    }
    // UTF16: pairs of bytes in the JVM's native order (little-endian on x86 and AArch64).
    for (size_t i = 0; i + 1 < a->length; i += 2) {
      units.push_back(static_cast<char16_t>(a->data[i] | a->data[i + 1] << 8));
    }
  } else {
    return std::nullopt;
  }
  return utf16_to_utf8(units);
}

}  // namespace hprof
