// SPDX-License-Identifier: Apache-2.0
// The binary HPROF format ("JAVA PROFILE 1.0.1" / "JAVA PROFILE 1.0.2"): a streaming writer for
// the HPROF agent and a bounds-checked reader for the front end and the tests.
// docs/hprof-binary-format.md describes the records and how this library uses them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hprof {

// Object, class, string and frame identifiers. With identifier size 4 they are zero-extended.
using Id = uint64_t;

enum class Version { k1_0_1, k1_0_2 };

// Top-level record tags.
enum class Tag : uint8_t {
  kUtf8 = 0x01,
  kLoadClass = 0x02,
  kUnloadClass = 0x03,
  kStackFrame = 0x04,
  kStackTrace = 0x05,
  kAllocSites = 0x06,
  kHeapSummary = 0x07,
  kStartThread = 0x0A,
  kEndThread = 0x0B,
  kHeapDump = 0x0C,
  kCpuSamples = 0x0D,
  kControlSettings = 0x0E,
  kHeapDumpSegment = 0x1C,
  kHeapDumpEnd = 0x2C,
};

// Heap-dump sub-record tags.
enum class SubTag : uint8_t {
  kRootUnknown = 0xFF,
  kRootJniGlobal = 0x01,
  kRootJniLocal = 0x02,
  kRootJavaFrame = 0x03,
  kRootNativeStack = 0x04,
  kRootStickyClass = 0x05,
  kRootThreadBlock = 0x06,
  kRootMonitorUsed = 0x07,
  kRootThreadObject = 0x08,
  kClassDump = 0x20,
  kInstanceDump = 0x21,
  kObjArrayDump = 0x22,
  kPrimArrayDump = 0x23,
};

// Value type codes of fields, constants and array elements.
enum class BasicType : uint8_t {
  kObject = 2,
  kBoolean = 4,
  kChar = 5,
  kFloat = 6,
  kDouble = 7,
  kByte = 8,
  kShort = 9,
  kInt = 10,
  kLong = 11,
};

bool is_valid_type(uint8_t code);
// Size in bytes of one value (kObject: id_size).
size_t type_size(BasicType type, uint32_t id_size);
// "object", "boolean", "char", ... ("unknown" for invalid codes).
std::string_view type_name(BasicType type);
std::string_view record_name(Tag tag);        // "LOAD CLASS", ...; "unknown" otherwise
std::string_view subrecord_name(SubTag tag);  // "CLASS DUMP", ...; "unknown" otherwise

// A typed value; `bits` holds the value's big-endian encoding read as an unsigned number.
struct Value {
  BasicType type = BasicType::kInt;
  uint64_t bits = 0;

  static Value of_object(Id id) { return {BasicType::kObject, id}; }
  static Value of_boolean(bool v) { return {BasicType::kBoolean, v ? 1u : 0u}; }
  static Value of_char(char16_t v) { return {BasicType::kChar, v}; }
  static Value of_byte(int8_t v) { return {BasicType::kByte, static_cast<uint8_t>(v)}; }
  static Value of_short(int16_t v) { return {BasicType::kShort, static_cast<uint16_t>(v)}; }
  static Value of_int(int32_t v) { return {BasicType::kInt, static_cast<uint32_t>(v)}; }
  static Value of_long(int64_t v) { return {BasicType::kLong, static_cast<uint64_t>(v)}; }
  static Value of_float(float v);
  static Value of_double(double v);

  Id as_object() const { return bits; }
  bool as_boolean() const { return bits != 0; }
  char16_t as_char() const { return static_cast<char16_t>(bits); }
  int8_t as_byte() const { return static_cast<int8_t>(bits); }
  int16_t as_short() const { return static_cast<int16_t>(bits); }
  int32_t as_int() const { return static_cast<int32_t>(bits); }
  int64_t as_long() const { return static_cast<int64_t>(bits); }
  float as_float() const;
  double as_double() const;

  bool operator==(const Value&) const = default;
};

// Big-endian encoding of values as they appear in INSTANCE DUMP field data.
void append_value(std::vector<uint8_t>& out, const Value& value, uint32_t id_size);

// ---- Records. `time` is microseconds since the start of the profile: the reader fills it in,
// the writer stamps records from its clock and ignores it. ----

struct Header {
  Version version = Version::k1_0_2;
  uint32_t id_size = 8;
  uint64_t timestamp_ms = 0;  // creation time, ms since 1970
  bool operator==(const Header&) const = default;
};

struct Utf8 {
  Id id = 0;
  std::string_view text;
  uint32_t time = 0;
  bool operator==(const Utf8&) const = default;
};

struct LoadClass {
  uint32_t class_serial = 0;
  Id class_id = 0;
  uint32_t trace_serial = 0;
  Id name_id = 0;
  uint32_t time = 0;
  bool operator==(const LoadClass&) const = default;
};

struct UnloadClass {
  uint32_t class_serial = 0;
  uint32_t time = 0;
  bool operator==(const UnloadClass&) const = default;
};

struct StackFrame {
  Id frame_id = 0;
  Id method_name_id = 0;
  Id signature_id = 0;
  Id source_file_id = 0;  // 0: none
  uint32_t class_serial = 0;
  int32_t line = 0;  // > 0 line, -1 unknown, -2 compiled, -3 native
  uint32_t time = 0;
  bool operator==(const StackFrame&) const = default;
};

struct StackTrace {
  uint32_t trace_serial = 0;
  uint32_t thread_serial = 0;
  std::vector<Id> frame_ids;
  uint32_t time = 0;
  bool operator==(const StackTrace&) const = default;
};

struct AllocSite {
  uint8_t kind = 0;  // 0 object, 2 object array, else the BasicType of a primitive array
  uint32_t class_serial = 0;
  uint32_t trace_serial = 0;
  uint32_t live_bytes = 0;
  uint32_t live_instances = 0;
  uint32_t allocated_bytes = 0;
  uint32_t allocated_instances = 0;
  bool operator==(const AllocSite&) const = default;
};

struct AllocSites {
  uint16_t flags = 0;
  uint32_t cutoff = 0;  // raw bits (JDK 8 wrote the low word of a double)
  uint32_t total_live_bytes = 0;
  uint32_t total_live_instances = 0;
  uint64_t total_allocated_bytes = 0;
  uint64_t total_allocated_instances = 0;
  std::vector<AllocSite> sites;
  uint32_t time = 0;
  bool operator==(const AllocSites&) const = default;
};

struct HeapSummary {
  uint32_t live_bytes = 0;
  uint32_t live_instances = 0;
  uint64_t allocated_bytes = 0;
  uint64_t allocated_instances = 0;
  uint32_t time = 0;
  bool operator==(const HeapSummary&) const = default;
};

struct StartThread {
  uint32_t thread_serial = 0;
  Id thread_id = 0;
  uint32_t trace_serial = 0;
  Id name_id = 0;
  Id group_name_id = 0;
  Id parent_group_name_id = 0;
  uint32_t time = 0;
  bool operator==(const StartThread&) const = default;
};

struct EndThread {
  uint32_t thread_serial = 0;
  uint32_t time = 0;
  bool operator==(const EndThread&) const = default;
};

struct CpuSample {
  uint32_t samples = 0;
  uint32_t trace_serial = 0;
  bool operator==(const CpuSample&) const = default;
};

struct CpuSamples {
  uint32_t total = 0;
  std::vector<CpuSample> traces;  // written with count = traces.size()
  uint32_t time = 0;
  bool operator==(const CpuSamples&) const = default;
};

enum ControlFlags : uint32_t { kAllocTraces = 0x1, kCpuSampling = 0x2 };

struct ControlSettings {
  uint32_t flags = 0;
  uint16_t max_depth = 0;
  uint32_t time = 0;
  bool operator==(const ControlSettings&) const = default;
};

// ---- Heap-dump sub-records ----

// Every root kind. `thread_serial` for JNI LOCAL, JAVA FRAME, NATIVE STACK, THREAD BLOCK and
// THREAD OBJECT; `frame_depth` for JNI LOCAL and JAVA FRAME; `trace_serial` for THREAD OBJECT;
// `jni_ref` for JNI GLOBAL. Unused fields are 0.
struct Root {
  SubTag kind = SubTag::kRootUnknown;
  Id object_id = 0;
  Id jni_ref = 0;
  uint32_t thread_serial = 0;
  uint32_t frame_depth = 0;
  uint32_t trace_serial = 0;
  bool operator==(const Root&) const = default;
};

struct ConstantPoolEntry {
  uint16_t index = 0;
  Value value;
  bool operator==(const ConstantPoolEntry&) const = default;
};
struct StaticField {
  Id name_id = 0;
  Value value;
  bool operator==(const StaticField&) const = default;
};
struct FieldDescriptor {
  Id name_id = 0;
  BasicType type = BasicType::kInt;
  bool operator==(const FieldDescriptor&) const = default;
};

struct ClassDump {
  Id class_id = 0;
  uint32_t trace_serial = 0;
  Id super_id = 0;
  Id loader_id = 0;
  Id signers_id = 0;
  Id protection_domain_id = 0;
  Id reserved1 = 0;
  Id reserved2 = 0;
  uint32_t instance_size = 0;
  std::vector<ConstantPoolEntry> constant_pool;
  std::vector<StaticField> statics;
  std::vector<FieldDescriptor> fields;  // instance fields declared by this class
  bool operator==(const ClassDump&) const = default;
};

// Reader side: views into the file's bytes (owned by the Profile, or valid during a callback).
struct InstanceDump {
  Id object_id = 0;
  uint32_t trace_serial = 0;
  Id class_id = 0;
  std::span<const uint8_t> fields;  // raw big-endian values: this class's fields, then super's
};

struct ObjArrayDump {
  Id array_id = 0;
  uint32_t trace_serial = 0;
  Id array_class_id = 0;
  std::vector<Id> elements;
  bool operator==(const ObjArrayDump&) const = default;
};

struct PrimArrayDump {
  Id array_id = 0;
  uint32_t trace_serial = 0;
  BasicType type = BasicType::kInt;
  uint32_t length = 0;
  std::span<const uint8_t> data;  // length * type_size big-endian bytes
  // Element i as its big-endian bits (i < length).
  uint64_t element_bits(size_t i) const;
  Value element(size_t i) const { return {type, element_bits(i)}; }
};

// ---- Errors ----

// Malformed or truncated input; `offset` is the file offset where the problem was found.
class FormatError : public std::runtime_error {
 public:
  FormatError(const std::string& message, uint64_t offset)
      : std::runtime_error(message), offset_(offset) {}
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

// ---- Writing ----

// Where the writer's bytes go. A seekable sink also supports patch() at an earlier offset,
// which lets heap-dump segments stream straight to it with their lengths patched afterwards.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const void* data, size_t size) = 0;
  virtual void flush() {}
  virtual bool seekable() const { return false; }
  virtual uint64_t position() const { return 0; }  // bytes written so far (seekable sinks)
  virtual void patch(uint64_t offset, const void* data, size_t size);  // throws unless seekable
};

// Writes to a file (created or truncated) or to a file descriptor (e.g. a socket; not closed).
// Buffered; seekable when the descriptor is a regular file. I/O errors throw std::system_error.
class FileSink : public Sink {
 public:
  explicit FileSink(const std::string& path);
  explicit FileSink(int fd);
  ~FileSink() override;  // flushes (errors ignored: call flush() or close() to see them)
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  void write(const void* data, size_t size) override;
  void flush() override;
  bool seekable() const override { return seekable_; }
  uint64_t position() const override { return position_; }
  void patch(uint64_t offset, const void* data, size_t size) override;
  void close();

 private:
  void write_fully(const void* data, size_t size);
  int fd_ = -1;
  bool owned_ = false;
  bool seekable_ = false;
  uint64_t position_ = 0;
  uint64_t start_ = 0;  // descriptor offset at construction
  std::vector<uint8_t> buffer_;
};

// Collects the bytes in memory; seekable unless constructed with false (to test streaming).
class MemorySink : public Sink {
 public:
  explicit MemorySink(bool seekable = true) : seekable_(seekable) {}
  void write(const void* data, size_t size) override;
  bool seekable() const override { return seekable_; }
  uint64_t position() const override { return data_.size(); }
  void patch(uint64_t offset, const void* data, size_t size) override;
  const std::vector<uint8_t>& data() const { return data_; }

 private:
  bool seekable_;
  std::vector<uint8_t> data_;
};

struct WriterOptions {
  Version version = Version::k1_0_2;
  uint32_t id_size = 8;       // 4 or 8
  uint64_t timestamp_ms = 0;  // 0: now
  // Largest HEAP DUMP SEGMENT body when segments stream to a seekable sink (1.0.2).
  uint64_t segment_limit = 2'000'000'000;
  // Largest buffered segment when the sink is not seekable (1.0.2). Memory use of a heap dump is
  // bounded by this; a single larger sub-record becomes a segment of its own, streamed directly.
  uint64_t buffer_limit = 16u << 20;
  // Microseconds since start for each record; default: a steady clock started by the writer.
  std::function<uint32_t()> clock;
};

class HeapDumpWriter;
namespace detail {
class ProfileBuilder;
}

// Writes the header on construction, then one record per call. Not thread-safe. The sink and
// any HeapDumpWriter must be finished before the writer is destroyed. Identifiers that do not fit
// the identifier size throw std::invalid_argument.
class BinaryWriter {
 public:
  BinaryWriter(Sink& sink, WriterOptions options = {});
  ~BinaryWriter();
  BinaryWriter(const BinaryWriter&) = delete;
  BinaryWriter& operator=(const BinaryWriter&) = delete;

  uint32_t id_size() const;
  Version version() const;

  void utf8(Id id, std::string_view text);
  void load_class(const LoadClass& r);
  void unload_class(uint32_t class_serial);
  void stack_frame(const StackFrame& r);
  void stack_trace(const StackTrace& r);
  void alloc_sites(const AllocSites& r);
  void heap_summary(const HeapSummary& r);
  void start_thread(const StartThread& r);
  void end_thread(uint32_t thread_serial);
  void cpu_samples(const CpuSamples& r);
  void control_settings(uint32_t flags, uint16_t max_depth);

  // Starts a heap dump; sub-records go through the returned builder until its finish().
  // In 1.0.2 top-level records may be written while the dump is open (the current segment is
  // closed first); in 1.0.1 that throws std::logic_error, as does a second open dump.
  HeapDumpWriter begin_heap_dump();

  void flush();

 private:
  friend class HeapDumpWriter;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class ByteOrder { kHost, kBig };

// Heap-dump sub-records of one dump (HEAP DUMP in 1.0.1, HEAP DUMP SEGMENTs + HEAP DUMP END in
// 1.0.2). Movable; the destructor finishes an unfinished dump (ignoring errors).
class HeapDumpWriter {
 public:
  HeapDumpWriter(HeapDumpWriter&& other) noexcept;
  HeapDumpWriter& operator=(HeapDumpWriter&&) = delete;
  ~HeapDumpWriter();

  void root_unknown(Id object);
  void root_jni_global(Id object, Id jni_ref);
  void root_jni_local(Id object, uint32_t thread_serial, uint32_t frame_depth);
  void root_java_frame(Id object, uint32_t thread_serial, uint32_t frame_depth);
  void root_native_stack(Id object, uint32_t thread_serial);
  void root_sticky_class(Id object);
  void root_thread_block(Id object, uint32_t thread_serial);
  void root_monitor_used(Id object);
  void root_thread_object(Id object, uint32_t thread_serial, uint32_t trace_serial);
  void root(const Root& r);  // any of the above by r.kind

  void class_dump(const ClassDump& r);
  // field_values: the encoded values (append_value), this class's fields first.
  void instance_dump(Id object, uint32_t trace_serial, Id class_id,
                     std::span<const uint8_t> field_values);
  void obj_array_dump(Id array, uint32_t trace_serial, Id array_class,
                      std::span<const Id> elements);
  // `elements` holds `length` values of `type` (not kObject) in the given byte order.
  void prim_array_dump(Id array, uint32_t trace_serial, BasicType type, const void* elements,
                       uint32_t length, ByteOrder order = ByteOrder::kHost);

  // Ends the dump (HEAP DUMP END in 1.0.2, length patch or buffered write in 1.0.1).
  void finish();

 private:
  friend class BinaryWriter;
  explicit HeapDumpWriter(BinaryWriter::Impl* impl) : impl_(impl) {}
  BinaryWriter::Impl& open() const;
  BinaryWriter::Impl* impl_;
};

// ---- Reading ----

struct RecordInfo {
  Tag tag;
  uint32_t time = 0;
  uint32_t length = 0;
  uint64_t offset = 0;  // of the record's tag byte
};

// Streaming callbacks, in file order. Views (string_view, span) are valid during the call.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void on_header(const Header&) {}
  virtual void on_record(const RecordInfo&) {}  // before the record's own callback(s)
  virtual void on_utf8(const Utf8&) {}
  virtual void on_load_class(const LoadClass&) {}
  virtual void on_unload_class(const UnloadClass&) {}
  virtual void on_stack_frame(const StackFrame&) {}
  virtual void on_stack_trace(const StackTrace&) {}
  virtual void on_alloc_sites(const AllocSites&) {}
  virtual void on_heap_summary(const HeapSummary&) {}
  virtual void on_start_thread(const StartThread&) {}
  virtual void on_end_thread(const EndThread&) {}
  virtual void on_cpu_samples(const CpuSamples&) {}
  virtual void on_control_settings(const ControlSettings&) {}
  // HEAP DUMP (1.0.1) or HEAP DUMP SEGMENT (1.0.2): its sub-records follow.
  virtual void on_heap_dump_segment(const RecordInfo&) {}
  virtual void on_heap_dump_end(const RecordInfo&) {}  // HEAP DUMP END
  virtual void on_root(const Root&) {}
  virtual void on_class_dump(const ClassDump&) {}
  virtual void on_instance_dump(const InstanceDump&) {}
  virtual void on_obj_array_dump(const ObjArrayDump&) {}
  virtual void on_prim_array_dump(const PrimArrayDump&) {}
};

// Parses a whole file in memory; throws FormatError (message names `source` and the offset).
void parse(std::span<const uint8_t> data, Visitor& visitor, std::string_view source = "<memory>");
// Memory-maps the file (or reads it, if it cannot be mapped) and parses it.
void parse_file(const std::string& path, Visitor& visitor);

// Incremental parsing of a stream (e.g. a socket): feed bytes as they arrive; callbacks run for
// each complete record. Buffers at most one record (plus the bytes of the next). After a
// FormatError the parser is unusable.
class StreamParser {
 public:
  explicit StreamParser(Visitor& visitor, std::string source = "<stream>");
  ~StreamParser();
  StreamParser(const StreamParser&) = delete;
  StreamParser& operator=(const StreamParser&) = delete;

  void feed(const void* data, size_t size);
  // End of input: throws FormatError if it ends inside the header or a record.
  void finish();
  uint64_t offset() const;  // stream offset of the first unparsed byte
  size_t buffered() const;  // bytes waiting for the rest of their record
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One heap dump: its sub-records in file order, with lookup by id.
struct HeapDump {
  uint32_t time = 0;
  uint32_t segments = 0;  // HEAP DUMP / HEAP DUMP SEGMENT records
  bool complete = false;  // ended by HEAP DUMP END (1.0.2), or a 1.0.1 HEAP DUMP
  std::vector<Root> roots;
  std::vector<ClassDump> classes;
  std::vector<InstanceDump> instances;
  std::vector<ObjArrayDump> object_arrays;
  std::vector<PrimArrayDump> primitive_arrays;

  const ClassDump* find_class(Id id) const;
  const InstanceDump* find_instance(Id id) const;
  const ObjArrayDump* find_object_array(Id id) const;
  const PrimArrayDump* find_primitive_array(Id id) const;
  void build_index();  // done by the reader; call again after changing the vectors

 private:
  std::unordered_map<Id, uint32_t> class_index_;
  std::unordered_map<Id, uint64_t> object_index_;  // kind in the top 2 bits, index below
};

// The whole file as a model. Keeps the file's bytes (mapping or copy) alive for the views.
struct Profile {
  std::string source;
  Header header;
  std::unordered_map<Id, std::string> strings;
  std::vector<LoadClass> classes;
  std::vector<UnloadClass> unloaded_classes;
  std::vector<StackFrame> frames;
  std::vector<StackTrace> traces;
  std::vector<StartThread> threads;
  std::vector<EndThread> ended_threads;
  std::vector<AllocSites> alloc_sites;
  std::vector<HeapSummary> heap_summaries;
  std::vector<CpuSamples> cpu_samples;
  std::vector<ControlSettings> control_settings;
  std::vector<HeapDump> heap_dumps;

  // The UTF8 string of an id ("" if absent).
  std::string_view string(Id id) const;
  const LoadClass* find_class(Id class_id) const;
  const LoadClass* find_class_by_serial(uint32_t serial) const;
  // Name of a class object from its LOAD CLASS record (as stored: `java/lang/String` in JVM
  // dumps, `java.lang.String` in HPROF's); "" if unknown.
  std::string_view class_name(Id class_id) const;
  // File offset of a view into the file's bytes (e.g. InstanceDump::fields.data()).
  uint64_t offset_of(const uint8_t* p) const;

 private:
  friend class detail::ProfileBuilder;
  std::shared_ptr<const void> storage_;  // the bytes the views point into
  const uint8_t* storage_begin_ = nullptr;
  std::unordered_map<Id, uint32_t> class_index_;         // class id -> index in `classes`
  std::unordered_map<uint32_t, uint32_t> serial_index_;  // class serial -> index
};

Profile read_file(const std::string& path);
Profile read_memory(std::span<const uint8_t> data, std::string source = "<memory>");  // copies

// Instances per class name in a heap dump (INSTANCE DUMPs only).
std::map<std::string, uint64_t> instance_counts(const Profile& profile, const HeapDump& dump);

struct FieldValue {
  std::string_view name;  // from the profile's strings
  Id declaring_class = 0;
  Value value;
};

// Decodes an instance's fields along its CLASS DUMP chain (own class first). Throws FormatError
// when a class dump is missing, the chain loops, or the byte count does not match.
std::vector<FieldValue> decode_fields(const Profile& profile, const HeapDump& dump,
                                      const InstanceDump& instance);
// The first field of that name (own class first), or nullopt.
std::optional<Value> field_value(const Profile& profile, const HeapDump& dump,
                                 const InstanceDump& instance, std::string_view name);
// The contents of a java.lang.String instance as UTF-8 (JDK 9+ byte[] + coder, or JDK 8 char[]);
// nullopt if the object is not a String whose value array is in the dump.
std::optional<std::string> decode_string(const Profile& profile, const HeapDump& dump, Id object);

// HPROF's CPU SAMPLER note (docs/hprof-binary-format.md): a UTF8 record with the reserved name id
// two below the DROPPED note's (0xFF...FD), "CPU SAMPLER: signals=S taken=T recovered=R
// unattributable=U lost=L".
constexpr Id kSamplerNoteId = ~Id{2};
struct SamplerNote {
  uint64_t signals = 0, taken = 0, recovered = 0, unattributable = 0, lost = 0;
};
// The profile's CPU SAMPLER note (the last one written), or nullopt if it has none or it does not
// parse.
std::optional<SamplerNote> sampler_note(const Profile& profile);

}  // namespace hprof
