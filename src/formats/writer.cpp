// SPDX-License-Identifier: Apache-2.0
// BinaryWriter and HeapDumpWriter: the header, top-level records, and heap dumps streamed in
// segments (length patched on seekable sinks, segment buffered otherwise).
#include <array>
#include <bit>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "byte_io.h"
#include "hprof_format.h"

namespace hprof {

using detail::put_u1;
using detail::put_u2;
using detail::put_u4;
using detail::put_u8;

namespace {
constexpr uint64_t kMaxRecordLength = 0xFFFFFFFFu;
constexpr size_t kChunk = 64 * 1024;
}  // namespace

struct BinaryWriter::Impl {
  Sink& sink;
  WriterOptions options;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::vector<uint8_t> scratch;

  bool dump_open = false;        // a HeapDumpWriter is active
  bool segment_open = false;     // a HEAP DUMP (SEGMENT) record is open
  uint64_t length_position = 0;  // seekable sinks: where the open segment's length goes
  uint64_t segment_length = 0;   // body bytes of the open segment
  uint32_t segment_time = 0;
  std::vector<uint8_t> segment_buffer;  // non-seekable sinks: the open segment's body

  Impl(Sink& s, WriterOptions o) : sink(s), options(std::move(o)) {}

  uint32_t now() const {
    if (options.clock) return options.clock();
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    return static_cast<uint32_t>(us.count());  // wraps after ~71 minutes, as the format does
  }

  bool v101() const { return options.version == Version::k1_0_1; }
  bool buffered() const { return !sink.seekable(); }

  void put_id(std::vector<uint8_t>& out, Id id) const {
    if (options.id_size == 4) {
      if (id > 0xFFFFFFFFu) {
        throw std::invalid_argument("identifier " + std::to_string(id) +
                                    " does not fit in 4 bytes");
      }
      put_u4(out, static_cast<uint32_t>(id));
    } else {
      put_u8(out, id);
    }
  }

  void write_record_header(Tag tag, uint32_t time, uint64_t length) {
    if (length > kMaxRecordLength) {
      throw std::length_error(std::string(record_name(tag)) + " record of " +
                              std::to_string(length) + " bytes exceeds the u4 length");
    }
    uint8_t h[9];
    h[0] = static_cast<uint8_t>(tag);
    detail::store_u4(h + 1, time);
    detail::store_u4(h + 5, static_cast<uint32_t>(length));
    sink.write(h, sizeof h);
  }

  // A top-level record whose body is `scratch`.
  void record(Tag tag) {
    // Heap-dump readers (the JVM's own dumps set the pattern) expect one dump's segments back to
    // back: whatever a dump needs is written before it starts.
    if (dump_open) {
      throw std::logic_error(std::string("hprof: ") + std::string(record_name(tag)) +
                             " record inside an open heap dump");
    }
    write_record_header(tag, now(), scratch.size());
    sink.write(scratch.data(), scratch.size());
  }

  Tag dump_tag() const { return v101() ? Tag::kHeapDump : Tag::kHeapDumpSegment; }

  uint64_t segment_max() const {
    if (v101()) return kMaxRecordLength;
    uint64_t m = std::min(options.segment_limit, kMaxRecordLength);
    if (buffered()) m = std::min(m, options.buffer_limit);
    return m;
  }

  void open_segment() {
    segment_time = now();
    segment_length = 0;
    if (buffered()) {
      segment_buffer.clear();
    } else {
      write_record_header(dump_tag(), segment_time, 0);
      length_position = sink.position() - 4;
    }
    segment_open = true;
  }

  void close_segment() {
    if (!segment_open) return;
    segment_open = false;
    if (buffered()) {
      write_record_header(dump_tag(), segment_time, segment_length);
      sink.write(segment_buffer.data(), segment_buffer.size());
      segment_buffer.clear();
      if (segment_buffer.capacity() > 2 * std::max<uint64_t>(segment_max(), kChunk)) {
        segment_buffer.shrink_to_fit();
      }
    } else {
      uint8_t b[4];
      detail::store_u4(b, static_cast<uint32_t>(segment_length));
      sink.patch(length_position, b, 4);
    }
  }

  // Where sub-record bytes go: the open segment's buffer, or the sink.
  bool to_buffer = false;
  void out(const void* data, size_t size) {
    if (to_buffer) {
      auto p = static_cast<const uint8_t*>(data);
      segment_buffer.insert(segment_buffer.end(), p, p + size);
    } else {
      sink.write(data, size);
    }
  }

  // One sub-record: `head` (in scratch) then `payload_size` bytes produced by `payload`.
  template <typename Payload>
  void sub_record(uint64_t payload_size, Payload&& payload) {
    if (!dump_open) throw std::logic_error("hprof: heap dump sub-record after finish()");
    uint64_t total = scratch.size() + payload_size;
    if (v101()) {
      if (!segment_open) open_segment();
      if (segment_length + total > kMaxRecordLength) {
        throw std::length_error("hprof: 1.0.1 HEAP DUMP record exceeds 4 GB (use 1.0.2)");
      }
    } else {
      uint64_t max = segment_max();
      if (segment_open && segment_length + total > max) close_segment();
      if (total > kMaxRecordLength) {
        throw std::length_error("hprof: heap dump sub-record of " + std::to_string(total) +
                                " bytes exceeds the u4 segment length");
      }
      if (buffered() && total > max) {
        // Too big to buffer: a segment of its own, streamed straight to the sink.
        write_record_header(dump_tag(), now(), total);
        to_buffer = false;
        out(scratch.data(), scratch.size());
        payload();
        return;
      }
      if (!segment_open) open_segment();
    }
    to_buffer = buffered();
    out(scratch.data(), scratch.size());
    payload();
    segment_length += total;
  }

  void sub_record() {
    sub_record(0, [] {});
  }

  // Writes `count` elements of `size` bytes from `data` in big-endian order.
  void out_elements(const uint8_t* data, uint64_t count, size_t size, bool swap) {
    if (!swap || size == 1) {
      out(data, static_cast<size_t>(count * size));
      return;
    }
    std::array<uint8_t, kChunk> chunk;
    size_t per_chunk = kChunk / size;
    while (count > 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(count, per_chunk));
      for (size_t i = 0; i < n; ++i) {
        for (size_t b = 0; b < size; ++b) chunk[i * size + b] = data[i * size + size - 1 - b];
      }
      out(chunk.data(), n * size);
      data += n * size;
      count -= n;
    }
  }

  void finish_dump() {
    if (!dump_open) return;
    dump_open = false;
    if (v101()) {
      if (!segment_open) open_segment();
      close_segment();
    } else {
      close_segment();
      write_record_header(Tag::kHeapDumpEnd, now(), 0);
    }
  }
};

BinaryWriter::BinaryWriter(Sink& sink, WriterOptions options)
    : impl_(std::make_unique<Impl>(sink, std::move(options))) {
  const WriterOptions& o = impl_->options;
  if (o.id_size != 4 && o.id_size != 8) {
    throw std::invalid_argument("hprof: identifier size must be 4 or 8, not " +
                                std::to_string(o.id_size));
  }
  if (o.segment_limit == 0 || o.buffer_limit == 0) {
    throw std::invalid_argument("hprof: segment and buffer limits must be positive");
  }
  uint64_t ms = o.timestamp_ms;
  if (ms == 0) {
    ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
  }
  std::vector<uint8_t> h;
  const char* magic = o.version == Version::k1_0_1 ? "JAVA PROFILE 1.0.1" : "JAVA PROFILE 1.0.2";
  h.insert(h.end(), magic, magic + std::strlen(magic) + 1);
  put_u4(h, o.id_size);
  put_u8(h, ms);
  sink.write(h.data(), h.size());
}

BinaryWriter::~BinaryWriter() {
  try {
    impl_->sink.flush();
  } catch (...) {
  }
}

uint32_t BinaryWriter::id_size() const {
  return impl_->options.id_size;
}
Version BinaryWriter::version() const {
  return impl_->options.version;
}
void BinaryWriter::flush() {
  impl_->sink.flush();
}

void BinaryWriter::utf8(Id id, std::string_view text) {
  auto& s = impl_->scratch;
  s.clear();
  impl_->put_id(s, id);
  s.insert(s.end(), text.begin(), text.end());
  impl_->record(Tag::kUtf8);
}

void BinaryWriter::load_class(const LoadClass& r) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, r.class_serial);
  impl_->put_id(s, r.class_id);
  put_u4(s, r.trace_serial);
  impl_->put_id(s, r.name_id);
  impl_->record(Tag::kLoadClass);
}

void BinaryWriter::unload_class(uint32_t class_serial) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, class_serial);
  impl_->record(Tag::kUnloadClass);
}

void BinaryWriter::stack_frame(const StackFrame& r) {
  auto& s = impl_->scratch;
  s.clear();
  impl_->put_id(s, r.frame_id);
  impl_->put_id(s, r.method_name_id);
  impl_->put_id(s, r.signature_id);
  impl_->put_id(s, r.source_file_id);
  put_u4(s, r.class_serial);
  put_u4(s, static_cast<uint32_t>(r.line));
  impl_->record(Tag::kStackFrame);
}

void BinaryWriter::stack_trace(const StackTrace& r) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, r.trace_serial);
  put_u4(s, r.thread_serial);
  put_u4(s, static_cast<uint32_t>(r.frame_ids.size()));
  for (Id f : r.frame_ids) impl_->put_id(s, f);
  impl_->record(Tag::kStackTrace);
}

void BinaryWriter::alloc_sites(const AllocSites& r) {
  auto& s = impl_->scratch;
  s.clear();
  put_u2(s, r.flags);
  put_u4(s, r.cutoff);
  put_u4(s, r.total_live_bytes);
  put_u4(s, r.total_live_instances);
  put_u8(s, r.total_allocated_bytes);
  put_u8(s, r.total_allocated_instances);
  put_u4(s, static_cast<uint32_t>(r.sites.size()));
  for (const AllocSite& site : r.sites) {
    put_u1(s, site.kind);
    put_u4(s, site.class_serial);
    put_u4(s, site.trace_serial);
    put_u4(s, site.live_bytes);
    put_u4(s, site.live_instances);
    put_u4(s, site.allocated_bytes);
    put_u4(s, site.allocated_instances);
  }
  impl_->record(Tag::kAllocSites);
}

void BinaryWriter::heap_summary(const HeapSummary& r) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, r.live_bytes);
  put_u4(s, r.live_instances);
  put_u8(s, r.allocated_bytes);
  put_u8(s, r.allocated_instances);
  impl_->record(Tag::kHeapSummary);
}

void BinaryWriter::start_thread(const StartThread& r) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, r.thread_serial);
  impl_->put_id(s, r.thread_id);
  put_u4(s, r.trace_serial);
  impl_->put_id(s, r.name_id);
  impl_->put_id(s, r.group_name_id);
  impl_->put_id(s, r.parent_group_name_id);
  impl_->record(Tag::kStartThread);
}

void BinaryWriter::end_thread(uint32_t thread_serial) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, thread_serial);
  impl_->record(Tag::kEndThread);
}

void BinaryWriter::cpu_samples(const CpuSamples& r) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, r.total);
  put_u4(s, static_cast<uint32_t>(r.traces.size()));
  for (const CpuSample& c : r.traces) {
    put_u4(s, c.samples);
    put_u4(s, c.trace_serial);
  }
  impl_->record(Tag::kCpuSamples);
}

void BinaryWriter::control_settings(uint32_t flags, uint16_t max_depth) {
  auto& s = impl_->scratch;
  s.clear();
  put_u4(s, flags);
  put_u2(s, max_depth);
  impl_->record(Tag::kControlSettings);
}

HeapDumpWriter BinaryWriter::begin_heap_dump() {
  if (impl_->dump_open) throw std::logic_error("hprof: a heap dump is already open");
  impl_->dump_open = true;
  return HeapDumpWriter(impl_.get());
}

// ---- HeapDumpWriter ----

HeapDumpWriter::HeapDumpWriter(HeapDumpWriter&& other) noexcept : impl_(other.impl_) {
  other.impl_ = nullptr;
}

HeapDumpWriter::~HeapDumpWriter() {
  if (impl_ == nullptr) return;
  try {
    finish();
  } catch (...) {
  }
}

BinaryWriter::Impl& HeapDumpWriter::open() const {
  if (impl_ == nullptr) throw std::logic_error("hprof: heap dump used after finish()");
  return *impl_;
}

void HeapDumpWriter::root(const Root& r) {
  auto& d = open();
  auto& s = d.scratch;
  s.clear();
  put_u1(s, static_cast<uint8_t>(r.kind));
  d.put_id(s, r.object_id);
  switch (r.kind) {
    case SubTag::kRootUnknown:
    case SubTag::kRootStickyClass:
    case SubTag::kRootMonitorUsed:
      break;
    case SubTag::kRootJniGlobal:
      d.put_id(s, r.jni_ref);
      break;
    case SubTag::kRootJniLocal:
    case SubTag::kRootJavaFrame:
      put_u4(s, r.thread_serial);
      put_u4(s, r.frame_depth);
      break;
    case SubTag::kRootNativeStack:
    case SubTag::kRootThreadBlock:
      put_u4(s, r.thread_serial);
      break;
    case SubTag::kRootThreadObject:
      put_u4(s, r.thread_serial);
      put_u4(s, r.trace_serial);
      break;
    default:
      throw std::invalid_argument("hprof: " + std::string(subrecord_name(r.kind)) +
                                  " is not a root kind");
  }
  d.sub_record();
}

void HeapDumpWriter::root_unknown(Id object) {
  root({.kind = SubTag::kRootUnknown, .object_id = object});
}
void HeapDumpWriter::root_jni_global(Id object, Id jni_ref) {
  root({.kind = SubTag::kRootJniGlobal, .object_id = object, .jni_ref = jni_ref});
}
void HeapDumpWriter::root_jni_local(Id object, uint32_t thread_serial, uint32_t frame_depth) {
  root({.kind = SubTag::kRootJniLocal,
        .object_id = object,
        .thread_serial = thread_serial,
        .frame_depth = frame_depth});
}
void HeapDumpWriter::root_java_frame(Id object, uint32_t thread_serial, uint32_t frame_depth) {
  root({.kind = SubTag::kRootJavaFrame,
        .object_id = object,
        .thread_serial = thread_serial,
        .frame_depth = frame_depth});
}
void HeapDumpWriter::root_native_stack(Id object, uint32_t thread_serial) {
  root({.kind = SubTag::kRootNativeStack, .object_id = object, .thread_serial = thread_serial});
}
void HeapDumpWriter::root_sticky_class(Id object) {
  root({.kind = SubTag::kRootStickyClass, .object_id = object});
}
void HeapDumpWriter::root_thread_block(Id object, uint32_t thread_serial) {
  root({.kind = SubTag::kRootThreadBlock, .object_id = object, .thread_serial = thread_serial});
}
void HeapDumpWriter::root_monitor_used(Id object) {
  root({.kind = SubTag::kRootMonitorUsed, .object_id = object});
}
void HeapDumpWriter::root_thread_object(Id object, uint32_t thread_serial, uint32_t trace_serial) {
  root({.kind = SubTag::kRootThreadObject,
        .object_id = object,
        .thread_serial = thread_serial,
        .trace_serial = trace_serial});
}

void HeapDumpWriter::class_dump(const ClassDump& r) {
  auto& d = open();
  auto check_count = [](size_t n, const char* what) {
    if (n > 0xFFFF) {
      throw std::invalid_argument(std::string("hprof: CLASS DUMP with ") + std::to_string(n) + " " +
                                  what + " (at most 65535)");
    }
  };
  check_count(r.constant_pool.size(), "constant pool entries");
  check_count(r.statics.size(), "static fields");
  check_count(r.fields.size(), "instance fields");
  uint32_t id_size = d.options.id_size;
  auto& s = d.scratch;
  s.clear();
  put_u1(s, static_cast<uint8_t>(SubTag::kClassDump));
  d.put_id(s, r.class_id);
  put_u4(s, r.trace_serial);
  d.put_id(s, r.super_id);
  d.put_id(s, r.loader_id);
  d.put_id(s, r.signers_id);
  d.put_id(s, r.protection_domain_id);
  d.put_id(s, r.reserved1);
  d.put_id(s, r.reserved2);
  put_u4(s, r.instance_size);
  put_u2(s, static_cast<uint32_t>(r.constant_pool.size()));
  for (const ConstantPoolEntry& e : r.constant_pool) {
    put_u2(s, e.index);
    put_u1(s, static_cast<uint8_t>(e.value.type));
    append_value(s, e.value, id_size);
  }
  put_u2(s, static_cast<uint32_t>(r.statics.size()));
  for (const StaticField& f : r.statics) {
    d.put_id(s, f.name_id);
    put_u1(s, static_cast<uint8_t>(f.value.type));
    append_value(s, f.value, id_size);
  }
  put_u2(s, static_cast<uint32_t>(r.fields.size()));
  for (const FieldDescriptor& f : r.fields) {
    if (!is_valid_type(static_cast<uint8_t>(f.type))) {
      throw std::invalid_argument("hprof: invalid field type code " +
                                  std::to_string(static_cast<int>(f.type)));
    }
    d.put_id(s, f.name_id);
    put_u1(s, static_cast<uint8_t>(f.type));
  }
  d.sub_record();
}

void HeapDumpWriter::instance_dump(Id object, uint32_t trace_serial, Id class_id,
                                   std::span<const uint8_t> field_values) {
  auto& d = open();
  if (field_values.size() > 0xFFFFFFFFu) throw std::length_error("hprof: instance too large");
  auto& s = d.scratch;
  s.clear();
  put_u1(s, static_cast<uint8_t>(SubTag::kInstanceDump));
  d.put_id(s, object);
  put_u4(s, trace_serial);
  d.put_id(s, class_id);
  put_u4(s, static_cast<uint32_t>(field_values.size()));
  d.sub_record(field_values.size(), [&] { d.out(field_values.data(), field_values.size()); });
}

void HeapDumpWriter::obj_array_dump(Id array, uint32_t trace_serial, Id array_class,
                                    std::span<const Id> elements) {
  auto& d = open();
  if (elements.size() > 0xFFFFFFFFu) throw std::length_error("hprof: array too long");
  uint32_t id_size = d.options.id_size;
  if (id_size == 4) {
    for (Id e : elements) {
      if (e > 0xFFFFFFFFu) {
        throw std::invalid_argument("identifier " + std::to_string(e) + " does not fit in 4 bytes");
      }
    }
  }
  auto& s = d.scratch;
  s.clear();
  put_u1(s, static_cast<uint8_t>(SubTag::kObjArrayDump));
  d.put_id(s, array);
  put_u4(s, trace_serial);
  put_u4(s, static_cast<uint32_t>(elements.size()));
  d.put_id(s, array_class);
  d.sub_record(elements.size() * id_size, [&] {
    std::array<uint8_t, kChunk> chunk;
    size_t per_chunk = kChunk / id_size;
    for (size_t i = 0; i < elements.size(); i += per_chunk) {
      size_t n = std::min(per_chunk, elements.size() - i);
      uint8_t* p = chunk.data();
      for (size_t k = 0; k < n; ++k) {
        Id e = elements[i + k];
        for (size_t b = id_size; b-- > 0;) *p++ = static_cast<uint8_t>(e >> (8 * b));
      }
      d.out(chunk.data(), n * id_size);
    }
  });
}

void HeapDumpWriter::prim_array_dump(Id array, uint32_t trace_serial, BasicType type,
                                     const void* elements, uint32_t length, ByteOrder order) {
  auto& d = open();
  if (type == BasicType::kObject || !is_valid_type(static_cast<uint8_t>(type))) {
    throw std::invalid_argument("hprof: PRIM ARRAY DUMP of invalid element type " +
                                std::to_string(static_cast<int>(type)));
  }
  if (length > 0 && elements == nullptr) throw std::invalid_argument("hprof: null array data");
  size_t size = type_size(type, 8);
  auto& s = d.scratch;
  s.clear();
  put_u1(s, static_cast<uint8_t>(SubTag::kPrimArrayDump));
  d.put_id(s, array);
  put_u4(s, trace_serial);
  put_u4(s, length);
  put_u1(s, static_cast<uint8_t>(type));
  bool swap = order == ByteOrder::kHost && std::endian::native == std::endian::little;
  d.sub_record(uint64_t{length} * size,
               [&] { d.out_elements(static_cast<const uint8_t*>(elements), length, size, swap); });
}

void HeapDumpWriter::finish() {
  auto& d = open();
  impl_ = nullptr;
  d.finish_dump();
}

}  // namespace hprof
