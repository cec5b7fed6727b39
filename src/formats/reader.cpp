// SPDX-License-Identifier: Apache-2.0
// The parser: header, records and heap-dump sub-records, every read bounds-checked.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "byte_io.h"
#include "hprof_format.h"
#include "reader_internal.h"

namespace hprof {

using detail::Cursor;

namespace {

constexpr size_t kMaxVersionLength = 64;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

class Parser {
 public:
  Parser(Visitor& visitor, std::string_view source) : visitor_(visitor), source_(source) {}

  void run(std::span<const uint8_t> data) {
    Cursor c(data, 0, source_);
    parse_header(c, data);
    while (!c.at_end()) parse_record(c);
  }

  // The file's first bytes (the header plus anything after it).
  void parse_header(Cursor& c, std::span<const uint8_t> data) {
    c.set_context("header");
    if (data.empty()) c.fail("empty input: no HPROF header");
    size_t limit = std::min(data.size(), kMaxVersionLength);
    const void* nul = std::memchr(data.data(), 0, limit);
    if (nul == nullptr) {
      c.fail(data.size() < kMaxVersionLength ? "truncated header: no NUL after the version string"
                                             : "not an HPROF file: no NUL-terminated version "
                                               "string at the start");
    }
    size_t n = static_cast<size_t>(static_cast<const uint8_t*>(nul) - data.data());
    std::string_view version(reinterpret_cast<const char*>(data.data()), n);
    Header h;
    if (version == "JAVA PROFILE 1.0.1") {
      h.version = Version::k1_0_1;
    } else if (version == "JAVA PROFILE 1.0.2") {
      h.version = Version::k1_0_2;
    } else {
      std::string shown;
      for (char ch : version) shown += (ch >= 32 && ch < 127) ? ch : '?';
      c.fail("not an HPROF file: unknown version string \"" + shown + "\"");
    }
    c.bytes(n + 1, "version string");
    uint64_t at = c.offset();
    h.id_size = c.u4("identifier size");
    if (h.id_size != 4 && h.id_size != 8) {
      c.fail_at("unsupported identifier size " + std::to_string(h.id_size) + " (must be 4 or 8)",
                at);
    }
    h.timestamp_ms = c.u8("timestamp");
    id_size_ = h.id_size;
    visitor_.on_header(h);
  }

  // One record at the cursor.
  void parse_record(Cursor& c) {
    c.set_context("record header");
    uint64_t at = c.offset();
    uint8_t raw_tag = c.u1("tag");
    uint32_t time = c.u4("time");
    uint32_t length = c.u4("length");
    Tag tag = static_cast<Tag>(raw_tag);
    std::string_view name = record_name(tag);
    if (name == "unknown") {
      c.fail_at("unknown record tag " + hex(raw_tag), at);
    }
    context_ = std::string(name) + " record at offset " + std::to_string(at);
    if (length > c.remaining()) {
      c.fail_at(context_ + ": length " + std::to_string(length) +
                    " overruns the end of the input (" + std::to_string(c.remaining()) +
                    " bytes left)",
                at);
    }
    uint64_t body_offset = c.offset();
    Cursor b(c.bytes(length, "body"), body_offset, source_);
    b.set_context(context_.c_str());
    RecordInfo info{tag, time, length, at};
    visitor_.on_record(info);
    switch (tag) {
      case Tag::kUtf8: {
        Utf8 r;
        r.time = time;
        r.id = id(b, "string id");
        auto text = b.bytes(b.remaining(), "text");
        r.text = std::string_view(reinterpret_cast<const char*>(text.data()), text.size());
        visitor_.on_utf8(r);
        break;
      }
      case Tag::kLoadClass: {
        LoadClass r;
        r.time = time;
        r.class_serial = b.u4("class serial");
        r.class_id = id(b, "class id");
        r.trace_serial = b.u4("trace serial");
        r.name_id = id(b, "name id");
        visitor_.on_load_class(r);
        break;
      }
      case Tag::kUnloadClass:
        visitor_.on_unload_class({b.u4("class serial"), time});
        break;
      case Tag::kStackFrame: {
        StackFrame r;
        r.time = time;
        r.frame_id = id(b, "frame id");
        r.method_name_id = id(b, "method name id");
        r.signature_id = id(b, "signature id");
        r.source_file_id = id(b, "source file id");
        r.class_serial = b.u4("class serial");
        r.line = static_cast<int32_t>(b.u4("line"));
        visitor_.on_stack_frame(r);
        break;
      }
      case Tag::kStackTrace: {
        StackTrace r;
        r.time = time;
        r.trace_serial = b.u4("trace serial");
        r.thread_serial = b.u4("thread serial");
        uint32_t n = b.u4("frame count");
        b.need_items(n, id_size_, "frame ids");
        r.frame_ids.reserve(n);
        for (uint32_t i = 0; i < n; ++i) r.frame_ids.push_back(id(b, "frame id"));
        visitor_.on_stack_trace(r);
        break;
      }
      case Tag::kAllocSites: {
        AllocSites r;
        r.time = time;
        r.flags = b.u2("flags");
        r.cutoff = b.u4("cutoff");
        r.total_live_bytes = b.u4("total live bytes");
        r.total_live_instances = b.u4("total live instances");
        r.total_allocated_bytes = b.u8("total allocated bytes");
        r.total_allocated_instances = b.u8("total allocated instances");
        uint32_t n = b.u4("site count");
        b.need_items(n, 25, "sites");
        r.sites.reserve(n);
        for (uint32_t i = 0; i < n; ++i) {
          AllocSite s;
          s.kind = b.u1("site kind");
          s.class_serial = b.u4("class serial");
          s.trace_serial = b.u4("trace serial");
          s.live_bytes = b.u4("live bytes");
          s.live_instances = b.u4("live instances");
          s.allocated_bytes = b.u4("allocated bytes");
          s.allocated_instances = b.u4("allocated instances");
          r.sites.push_back(s);
        }
        visitor_.on_alloc_sites(r);
        break;
      }
      case Tag::kHeapSummary: {
        HeapSummary r;
        r.time = time;
        r.live_bytes = b.u4("live bytes");
        r.live_instances = b.u4("live instances");
        r.allocated_bytes = b.u8("allocated bytes");
        r.allocated_instances = b.u8("allocated instances");
        visitor_.on_heap_summary(r);
        break;
      }
      case Tag::kStartThread: {
        StartThread r;
        r.time = time;
        r.thread_serial = b.u4("thread serial");
        r.thread_id = id(b, "thread id");
        r.trace_serial = b.u4("trace serial");
        r.name_id = id(b, "name id");
        r.group_name_id = id(b, "group name id");
        r.parent_group_name_id = id(b, "parent group name id");
        visitor_.on_start_thread(r);
        break;
      }
      case Tag::kEndThread:
        visitor_.on_end_thread({b.u4("thread serial"), time});
        break;
      case Tag::kCpuSamples: {
        CpuSamples r;
        r.time = time;
        r.total = b.u4("total");
        uint32_t n = b.u4("trace count");
        b.need_items(n, 8, "traces");
        r.traces.reserve(n);
        for (uint32_t i = 0; i < n; ++i) {
          CpuSample s;
          s.samples = b.u4("samples");
          s.trace_serial = b.u4("trace serial");
          r.traces.push_back(s);
        }
        visitor_.on_cpu_samples(r);
        break;
      }
      case Tag::kControlSettings: {
        ControlSettings r;
        r.time = time;
        r.flags = b.u4("flags");
        r.max_depth = b.u2("max depth");
        visitor_.on_control_settings(r);
        break;
      }
      case Tag::kHeapDump:
      case Tag::kHeapDumpSegment:
        visitor_.on_heap_dump_segment(info);
        while (!b.at_end()) parse_subrecord(b);
        break;
      case Tag::kHeapDumpEnd:
        visitor_.on_heap_dump_end(info);
        break;
    }
    if (!b.at_end()) {
      b.fail(context_ + ": " + std::to_string(b.remaining()) +
             " unexpected bytes after the record's fields (length " + std::to_string(length) + ")");
    }
  }

  Value value(Cursor& c, uint64_t type_at, uint8_t raw_type) {
    if (!is_valid_type(raw_type)) {
      c.fail_at(sub_context_ + ": invalid type code " + std::to_string(raw_type), type_at);
    }
    BasicType t = static_cast<BasicType>(raw_type);
    return {t, c.be(type_size(t, id_size_), "value")};
  }

  uint8_t type_code(Cursor& c, uint64_t* at) {
    *at = c.offset();
    return c.u1("type");
  }

  void parse_subrecord(Cursor& c) {
    uint64_t at = c.offset();
    c.set_context(context_.c_str());
    uint8_t raw = c.u1("sub-record tag");
    SubTag tag = static_cast<SubTag>(raw);
    std::string_view name = subrecord_name(tag);
    if (name == "unknown") {
      c.fail_at(context_ + ": unknown heap dump sub-record tag " + hex(raw), at);
    }
    sub_context_ =
        std::string(name) + " sub-record at offset " + std::to_string(at) + " in " + context_;
    c.set_context(sub_context_.c_str());
    switch (tag) {
      case SubTag::kRootUnknown:
      case SubTag::kRootJniGlobal:
      case SubTag::kRootJniLocal:
      case SubTag::kRootJavaFrame:
      case SubTag::kRootNativeStack:
      case SubTag::kRootStickyClass:
      case SubTag::kRootThreadBlock:
      case SubTag::kRootMonitorUsed:
      case SubTag::kRootThreadObject: {
        Root r;
        r.kind = tag;
        r.object_id = id(c, "object id");
        if (tag == SubTag::kRootJniGlobal) r.jni_ref = id(c, "JNI global ref id");
        if (tag == SubTag::kRootJniLocal || tag == SubTag::kRootJavaFrame ||
            tag == SubTag::kRootNativeStack || tag == SubTag::kRootThreadBlock ||
            tag == SubTag::kRootThreadObject) {
          r.thread_serial = c.u4("thread serial");
        }
        if (tag == SubTag::kRootJniLocal || tag == SubTag::kRootJavaFrame) {
          r.frame_depth = c.u4("frame depth");
        }
        if (tag == SubTag::kRootThreadObject) r.trace_serial = c.u4("trace serial");
        visitor_.on_root(r);
        break;
      }
      case SubTag::kClassDump: {
        ClassDump& r = class_dump_;
        r.class_id = id(c, "class id");
        r.trace_serial = c.u4("trace serial");
        r.super_id = id(c, "super class id");
        r.loader_id = id(c, "class loader id");
        r.signers_id = id(c, "signers id");
        r.protection_domain_id = id(c, "protection domain id");
        r.reserved1 = id(c, "reserved id");
        r.reserved2 = id(c, "reserved id");
        r.instance_size = c.u4("instance size");
        uint64_t type_at = 0;
        uint16_t n = c.u2("constant pool count");
        r.constant_pool.clear();
        for (uint16_t i = 0; i < n; ++i) {
          ConstantPoolEntry e;
          e.index = c.u2("constant pool index");
          uint8_t t = type_code(c, &type_at);
          e.value = value(c, type_at, t);
          r.constant_pool.push_back(e);
        }
        n = c.u2("static field count");
        r.statics.clear();
        for (uint16_t i = 0; i < n; ++i) {
          StaticField f;
          f.name_id = id(c, "static field name id");
          uint8_t t = type_code(c, &type_at);
          f.value = value(c, type_at, t);
          r.statics.push_back(f);
        }
        n = c.u2("instance field count");
        r.fields.clear();
        for (uint16_t i = 0; i < n; ++i) {
          FieldDescriptor f;
          f.name_id = id(c, "instance field name id");
          uint8_t t = type_code(c, &type_at);
          if (!is_valid_type(t)) {
            c.fail_at(sub_context_ + ": invalid field type code " + std::to_string(t), type_at);
          }
          f.type = static_cast<BasicType>(t);
          r.fields.push_back(f);
        }
        visitor_.on_class_dump(r);
        break;
      }
      case SubTag::kInstanceDump: {
        InstanceDump r;
        r.object_id = id(c, "object id");
        r.trace_serial = c.u4("trace serial");
        r.class_id = id(c, "class id");
        uint32_t n = c.u4("field byte count");
        r.fields = c.bytes(n, "field values");
        visitor_.on_instance_dump(r);
        break;
      }
      case SubTag::kObjArrayDump: {
        ObjArrayDump& r = obj_array_;
        r.array_id = id(c, "array id");
        r.trace_serial = c.u4("trace serial");
        uint32_t n = c.u4("element count");
        r.array_class_id = id(c, "array class id");
        c.need_items(n, id_size_, "elements");
        r.elements.clear();
        r.elements.reserve(n);
        for (uint32_t i = 0; i < n; ++i) r.elements.push_back(id(c, "element"));
        visitor_.on_obj_array_dump(r);
        break;
      }
      case SubTag::kPrimArrayDump: {
        PrimArrayDump r;
        r.array_id = id(c, "array id");
        r.trace_serial = c.u4("trace serial");
        r.length = c.u4("element count");
        uint64_t type_at = c.offset();
        uint8_t t = c.u1("element type");
        if (!is_valid_type(t) || t == static_cast<uint8_t>(BasicType::kObject)) {
          c.fail_at(sub_context_ + ": invalid primitive array element type " + std::to_string(t),
                    type_at);
        }
        r.type = static_cast<BasicType>(t);
        size_t size = type_size(r.type, id_size_);
        c.need_items(r.length, size, "elements");
        r.data = c.bytes(uint64_t{r.length} * size, "elements");
        visitor_.on_prim_array_dump(r);
        break;
      }
    }
  }

 private:
  Id id(Cursor& c, const char* what) { return c.be(id_size_, what); }

  Visitor& visitor_;
  std::string_view source_;
  uint32_t id_size_ = 8;
  std::string context_;
  std::string sub_context_;
  ClassDump class_dump_;    // reused to keep allocations down
  ObjArrayDump obj_array_;  // likewise
};

}  // namespace

void parse(std::span<const uint8_t> data, Visitor& visitor, std::string_view source) {
  Parser(visitor, source).run(data);
}

// ---- StreamParser ----

struct StreamParser::Impl {
  std::string source;  // before `parser`, which keeps a view of it
  Parser parser;
  std::vector<uint8_t> pending;
  size_t read = 0;        // consumed bytes of `pending`
  uint64_t consumed = 0;  // file offset of pending[read]
  bool header_done = false;
  bool failed = false;

  Impl(Visitor& v, std::string s) : source(std::move(s)), parser(v, source) {}

  std::span<const uint8_t> available() const {
    return std::span<const uint8_t>(pending).subspan(read);
  }
  void consume(size_t n) {
    read += n;
    consumed += n;
    if (read == pending.size()) {
      pending.clear();
      read = 0;
    } else if (read > pending.size() / 2 && read > 65536) {
      pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(read));
      read = 0;
    }
  }

  // Parses what is complete; returns false when more bytes are needed.
  bool step() {
    auto a = available();
    if (!header_done) {
      size_t limit = std::min(a.size(), kMaxVersionLength);
      const void* nul = limit == 0 ? nullptr : std::memchr(a.data(), 0, limit);
      size_t need;
      if (nul != nullptr) {
        size_t n = static_cast<size_t>(static_cast<const uint8_t*>(nul) - a.data());
        std::string_view v(reinterpret_cast<const char*>(a.data()), n);
        bool known = v == "JAVA PROFILE 1.0.1" || v == "JAVA PROFILE 1.0.2";
        need = known ? n + 13 : n + 1;  // unknown versions fail at once
      } else {
        need = kMaxVersionLength;  // fails as "not an HPROF file" once that much arrived
      }
      if (a.size() < need) return false;
      Cursor c(a.first(need), 0, source);
      parser.parse_header(c, a.first(need));
      header_done = true;
      consume(need);
      return true;
    }
    if (a.size() < 9) return false;
    uint64_t length = detail::load_be(a.data() + 5, 4);
    bool known = record_name(static_cast<Tag>(a[0])) != "unknown";
    size_t need = known ? static_cast<size_t>(9 + length) : 9;
    if (a.size() < need) return false;
    Cursor c(a.first(need), consumed, source);
    parser.parse_record(c);
    consume(need);
    return true;
  }
};

StreamParser::StreamParser(Visitor& visitor, std::string source)
    : impl_(std::make_unique<Impl>(visitor, std::move(source))) {}
StreamParser::~StreamParser() = default;

void StreamParser::feed(const void* data, size_t size) {
  if (impl_->failed) throw std::logic_error("hprof::StreamParser: feed after an error");
  auto p = static_cast<const uint8_t*>(data);
  impl_->pending.insert(impl_->pending.end(), p, p + size);
  try {
    while (impl_->step()) {
    }
  } catch (...) {
    impl_->failed = true;
    throw;
  }
}

void StreamParser::finish() {
  if (impl_->failed) throw std::logic_error("hprof::StreamParser: finish after an error");
  auto a = impl_->available();
  if (!impl_->header_done || !a.empty()) {
    impl_->failed = true;
    // Parse the incomplete remainder as if it were the end of a file, for the usual message.
    Cursor c(a, impl_->consumed, impl_->source);
    if (!impl_->header_done) impl_->parser.parse_header(c, a);
    impl_->parser.parse_record(c);
    c.fail("truncated input");  // not reached: the partial record fails above
  }
}

uint64_t StreamParser::offset() const {
  return impl_->consumed;
}
size_t StreamParser::buffered() const {
  return impl_->pending.size() - impl_->read;
}

namespace detail {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + path);
  auto file = std::make_shared<MappedFile>();
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::close(fd);
      file->map_ = p;
      file->bytes_ = {static_cast<const uint8_t*>(p), static_cast<size_t>(st.st_size)};
      return file;
    }
  }
  // Not mappable (pipe, empty file, ...): read it.
  uint8_t buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      throw std::system_error(e, std::generic_category(), "cannot read " + path);
    }
    if (n == 0) break;
    file->copy_.insert(file->copy_.end(), buf, buf + n);
  }
  ::close(fd);
  file->bytes_ = file->copy_;
  return file;
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) ::munmap(map_, bytes_.size());
}

}  // namespace detail

void parse_file(const std::string& path, Visitor& visitor) {
  auto file = detail::MappedFile::open(path);
  parse(file->bytes(), visitor, path);
}

}  // namespace hprof
