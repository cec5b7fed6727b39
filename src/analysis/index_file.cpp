// SPDX-License-Identifier: Apache-2.0
// The saved index: DUMP.jvmprof-index, a header and twelve 8-byte-aligned sections in host byte
// order, mapped back on reopen. The header (with the section table, each section's checksum in
// it) has its own checksum, checked on reopen with the small class and summary sections; every
// other section is checked (checksum, then the ranges of what it holds) on its first use, once
// (HeapIndex's accessors), so reopening reads only what the queries need. Valid only for the
// dump of the recorded size and mtime and for this format version; anything else, or any
// inconsistency at reopen, means "rebuild"; a section failing its check later is reported and
// the index rebuilt.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>

#include "analysis.h"
#include "heap_index.h"
#include "id_table.h"

namespace analysis::detail {

namespace {

constexpr char kMagic[8] = {'J', 'V', 'M', 'P', 'I', 'D', 'X', '\n'};
// 2: the id table section; 3: a checksum per section; 4: the summary section; 5: the damage
// counts (unknown classes, first offending records) and G1 fillers in the header.
constexpr uint32_t kVersion = 5;
constexpr uint32_t kEndianMark = 0x01020304;
constexpr int kSections = 12;
static_assert(kSections == kSectionCount);

struct Section {
  uint64_t offset;
  uint64_t bytes;
  uint64_t checksum;  // of its bytes (not the padding, which is zero)
};

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t endian_mark;
  uint64_t dump_size;
  int64_t dump_mtime_ns;
  uint64_t index_size;
  uint64_t checksum;  // of the header with this field as 0 (the section table included)
  uint32_t id_size;
  uint32_t node_count;
  uint64_t timestamp_ms;
  uint64_t counts[11];
  uint32_t class_class;
  uint32_t class_count;
  Section sections[kSections];
};
static_assert(std::is_trivially_copyable_v<FileHeader> && sizeof(FileHeader) % 8 == 0);

// FNV-style mixing of 8-byte words in four independent lanes (so the multiplies overlap: a
// section is summed at memory speed); a changed bit anywhere changes the sum. The value does not
// depend on how the bytes are split between add() calls.
class Checksum {
 public:
  void add(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    total_ += size;
    if (pending_ > 0) {
      const size_t take = std::min(size, sizeof block_ - pending_);
      std::memcpy(block_ + pending_, p, take);
      pending_ += take, p += take, size -= take;
      if (pending_ < sizeof block_) return;
      mix_block(block_);
      pending_ = 0;
    }
    for (; size >= sizeof block_; p += sizeof block_, size -= sizeof block_) mix_block(p);
    std::memcpy(block_, p, size);
    pending_ = size;
  }
  uint64_t value() const {
    Checksum c = *this;
    if (c.pending_ > 0) {
      std::memset(c.block_ + c.pending_, 0, sizeof block_ - c.pending_);
      c.mix_block(c.block_);
    }
    uint64_t h = c.total_;
    for (uint64_t lane : c.h_) h = mix(h, lane);
    return mix(h, c.total_);
  }

 private:
  static uint64_t mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x100000001b3ull;
    return h ^ (h >> 29);
  }
  void mix_block(const uint8_t* p) {
    for (int i = 0; i < 4; ++i) {
      uint64_t w;
      std::memcpy(&w, p + 8 * i, 8);
      h_[i] = mix(h_[i], w);
    }
  }
  uint64_t h_[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
                    0x7f4a7c159e3779b9ull};
  uint8_t block_[32] = {};
  size_t pending_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum_of(std::span<const uint8_t> bytes) {
  Checksum sum;
  sum.add(bytes.data(), bytes.size());
  return sum.value();
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  out.insert(out.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4);
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  out.insert(out.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8);
}
void put_str(std::vector<uint8_t>& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

std::vector<uint8_t> encode_meta(const HeapIndex& index) {
  std::vector<uint8_t> out;
  put_str(out, index.header.format);
  for (const ClassInfo& k : index.classes) {
    put_u64(out, k.id);
    put_u32(out, k.object);
    put_u32(out, k.super);
    put_u64(out, k.loader_id);
    put_u32(out, static_cast<uint32_t>(k.kind) | uint32_t{k.element_type} << 8);
    put_u32(out, k.data_size);
    put_u32(out, k.instance_size);
    put_str(out, k.name);
    put_u32(out, static_cast<uint32_t>(k.fields.size()));
    for (const FieldInfo& f : k.fields) {
      put_u32(out, f.type);
      put_str(out, f.name);
    }
  }
  return out;
}

class MetaReader {
 public:
  explicit MetaReader(std::span<const uint8_t> data) : data_(data) {}
  bool ok() const { return ok_; }
  uint32_t u32() { return take<uint32_t>(); }
  uint64_t u64() { return take<uint64_t>(); }
  std::string str() {
    uint32_t n = u32();
    if (!ok_ || n > data_.size() - pos_) return fail(), std::string();
    std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  template <typename T>
  T take() {
    T v{};
    if (!ok_ || sizeof(T) > data_.size() - pos_) return fail(), v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  void fail() { ok_ = false; }
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The summary section: the counts, then instances, shallow and retained bytes per class.
constexpr size_t kSummaryCounts = 10;

std::vector<uint8_t> encode_summary(const IndexSummary& s) {
  std::vector<uint8_t> out;
  for (uint64_t v :
       {s.instances, s.object_arrays, s.primitive_arrays, s.classes, s.gc_roots, s.shallow_bytes,
        s.reachable_objects, s.reachable_bytes, s.unreachable_objects, s.unreachable_bytes})
    put_u64(out, v);
  for (const IndexSummary::ClassTotals& k : s.per_class) {
    put_u64(out, k.instances);
    put_u64(out, k.shallow_bytes);
    put_u64(out, k.retained_bytes);
  }
  return out;
}

// Empty unless `data` is a summary of `classes` classes that adds up for `node_count` objects
// (a checksum collision or a bug must not show numbers that contradict each other).
std::optional<IndexSummary> decode_summary(std::span<const uint8_t> data, uint64_t node_count,
                                           uint64_t classes) {
  if (data.size() != 8 * (kSummaryCounts + 3 * classes)) return std::nullopt;
  MetaReader r(data);
  IndexSummary s;
  for (uint64_t* v : {&s.instances, &s.object_arrays, &s.primitive_arrays, &s.classes, &s.gc_roots,
                      &s.shallow_bytes, &s.reachable_objects, &s.reachable_bytes,
                      &s.unreachable_objects, &s.unreachable_bytes})
    *v = r.u64();
  s.per_class.resize(classes);
  uint64_t instances = 0, shallow = 0;
  for (IndexSummary::ClassTotals& k : s.per_class) {
    k.instances = r.u64();
    k.shallow_bytes = r.u64();
    k.retained_bytes = r.u64();
    instances += k.instances;
    shallow += k.shallow_bytes;
  }
  if (!r.ok() || !r.at_end() || instances != node_count || shallow != s.shallow_bytes ||
      s.instances + s.object_arrays + s.primitive_arrays + s.classes != node_count ||
      s.reachable_objects + s.unreachable_objects != node_count ||
      s.reachable_bytes + s.unreachable_bytes != s.shallow_bytes || s.gc_roots > node_count)
    return std::nullopt;
  return s;
}

template <typename T>
std::span<const uint8_t> bytes_of(std::span<const T> s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size_bytes()};
}

}  // namespace

namespace {

uint64_t align8(uint64_t n) {
  return (n + 7) & ~uint64_t{7};
}

bool write_all_at(int fd, const void* data, size_t size, uint64_t offset) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t w = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, size -= static_cast<size_t>(w), offset += static_cast<uint64_t>(w);
  }
  return true;
}

// A scratch file nobody else sees, unlinked at once: beside `near` (the index path), or in
// $TMPDIR (else /tmp) when `near` is empty.
int scratch_file(const std::string& near) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = near.empty()
                            ? std::string(dir && *dir ? dir : "/tmp") + "/jvmprof-index-XXXXXX"
                            : near + ".scratch-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd >= 0) ::unlink(name.data());
  return fd;
}

}  // namespace

uint64_t estimated_index_bytes(uint64_t dump_bytes) {
  return dump_bytes / 100 * 113 + 4096;
}

namespace {

std::string temp_dir() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Free bytes for an unprivileged writer on the file system of `dir`; unknown counts as plenty.
uint64_t free_bytes(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0) return ~uint64_t{0};
  return uint64_t{v.f_bavail} * v.f_frsize;
}

std::string megabytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t{10} << 30))
    std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.0f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

}  // namespace

IndexPlace plan_index_place(const std::string& index_path, bool save, uint64_t estimate,
                            const std::function<uint64_t(const std::string&)>& room_in) {
  const std::string here = dir_of(index_path);
  const uint64_t room = room_in(here);
  const std::string size = "about " + megabytes(estimate);
  if (room >= estimate)
    return {0, save ? "writing the index " + index_path + " (" + size +
                          "; --index-dir DIR puts it elsewhere, --no-index writes none)"
                    : ""};
  const std::string tmp = temp_dir();
  const uint64_t tmp_room = room_in(tmp);
  const std::string lacking =
      "only " + megabytes(room) + " free in " + here + ", the index needs " + size + ": ";
  if (tmp_room >= estimate)
    return {2, lacking + "building it in an unlinked scratch file in " + tmp + " (" +
                   megabytes(tmp_room) + " free), not saved"};
  return {3, lacking + "building it in memory (" + tmp + " has only " + megabytes(tmp_room) +
                 " free), not saved"};
}

// Before anything is written: where the index goes, how big it will be, and, when the file
// system there lacks the room, which fallback takes it instead (open_place's places 2 and 3).
void IndexBuilder::choose_first_place(uint64_t estimate) {
  if (estimate == 0) return;
  const IndexPlace plan = plan_index_place(index_path_, save_, estimate, free_bytes);
  place_ = plan.place;
  if (notice_ && !plan.notice.empty()) notice_(plan.notice);
}

IndexBuilder::IndexBuilder(const std::string& index_path, bool save, const DumpIdentity& dump,
                           uint64_t estimate, const NoticeFn& notice)
    : notice_(notice), index_path_(index_path), save_(save), dump_(dump) {
  choose_first_place(estimate);
  if (!next_file())
    throw Error(std::string("cannot create a file for the index (nor one in memory): ") +
                std::strerror(errno));
}

// Places to build the index in, in order of preference: 0 the temporary that becomes the saved
// index; 1 a scratch file beside it ($TMPDIR may be a tmpfs, whose pages cannot simply be
// dropped); 2 a scratch file in $TMPDIR; 3 a memfd. -1 if `place` cannot be opened.
int IndexBuilder::open_place(int place) {
  switch (place) {
    case 0: {
      if (!save_) return -1;
      tmp_path_ = index_path_ + ".tmp." + std::to_string(::getpid());
      int fd = ::open(tmp_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) tmp_path_.clear();
      return fd;
    }
    case 1:
      return scratch_file(index_path_);
    case 2:
      return scratch_file(std::string());
    case 3:
      return ::memfd_create("jvmprof-index", MFD_CLOEXEC);
    default:
      return -1;
  }
}

// Moves to the next place that opens and takes the offsets appended so far (a full or read-only
// disk: analyse without saving, or elsewhere). False, with errno set, when none is left.
bool IndexBuilder::next_file() {
  const uint64_t bytes = 8 * n_;
  std::vector<uint8_t> buffer(bytes ? std::min<uint64_t>(bytes, 1 << 20) : 0);
  int err = errno;
  while (place_ < 4) {
    const int place = place_++;
    const std::string tmp_before = tmp_path_;
    int fd = open_place(place);
    if (fd < 0) {
      err = errno;
      continue;
    }
    bool copied = true;
    for (uint64_t done = 0; copied && done < bytes;) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(buffer.size(), bytes - done));
      const off_t at = static_cast<off_t>(sizeof(FileHeader) + done);
      copied = ::pread(fd_, buffer.data(), chunk, at) == static_cast<ssize_t>(chunk) &&
               write_all_at(fd, buffer.data(), chunk, static_cast<uint64_t>(at));
      done += chunk;
    }
    if (!copied) {
      err = errno;
      ::close(fd);
      if (place == 0) {
        ::unlink(tmp_path_.c_str());
        tmp_path_.clear();
      }
      continue;
    }
    if (fd_ >= 0) {
      ::close(fd_);
      static const char* const kPlaces[] = {"", "an unlinked scratch file beside the index path",
                                            "an unlinked scratch file in $TMPDIR", "memory"};
      if (notice_)
        notice_(std::string("could not go on writing the index (") + std::strerror(err) +
                "): building it in " + kPlaces[place] + ", not saved");
    }
    if (place != 0 && !tmp_before.empty()) {
      ::unlink(tmp_before.c_str());  // the saved index's temporary, given up
      tmp_path_.clear();
    }
    fd_ = fd;
    final_path_ = place == 0 ? index_path_ : std::string();
    return true;
  }
  errno = err;
  return false;
}

void IndexBuilder::append_node_offsets(std::span<const uint64_t> offsets) {
  while (!write_all_at(fd_, offsets.data(), offsets.size_bytes(), sizeof(FileHeader) + 8 * n_))
    if (!next_file())
      throw Error(std::string("cannot write the index (in a file or in memory): ") +
                  std::strerror(errno));
  n_ += offsets.size();
}

void IndexBuilder::reserve(uint64_t max_edges) {
  max_edges_ = max_edges;
  // The fixed-size sections first, the references (whose count is only bounded until the objects
  // are read) last, so the small sections can follow wherever the references end.
  const uint64_t n = n_;
  const std::pair<IndexSection, uint64_t> order[] = {{kNodeOffset, 8 * n},
                                                     {kNodeClass, 4 * n},
                                                     {kNodeSize8, 4 * n},
                                                     {kEdgeBegin, 8 * (n + 1)},
                                                     {kIdom, 4 * n},
                                                     {kRetained, 8 * n},
                                                     {kIdTable, 4 * id_table_slots(n)},
                                                     {kEdgeTarget, 4 * max_edges}};
  uint64_t at = sizeof(FileHeader);
  for (auto [id, bytes] : order) {
    offset_[id] = at;
    at += align8(bytes);
  }
  reserved_ = at;
  while (!map_reserved())
    if (!next_file())
      throw Error("cannot reserve " + std::to_string(reserved_) +
                  " bytes for the index (in a file or in memory): " + std::strerror(errno));
}

bool IndexBuilder::map_reserved() {
  int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(reserved_));
  void* p = err == 0 ? ::mmap(nullptr, reserved_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0)
                     : MAP_FAILED;
  if (p == MAP_FAILED) {
    if (err != 0) errno = err;
    return false;
  }
  base_ = static_cast<uint8_t*>(p);
  return true;
}

std::span<uint32_t> IndexBuilder::id_table() {
  return at<uint32_t>(kIdTable, id_table_slots(n_));
}

IndexBuilder::~IndexBuilder() {
  if (base_) ::munmap(base_, reserved_);
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

void IndexBuilder::finish(HeapIndex& index, uint64_t edge_count) {
  index.node_count = static_cast<uint32_t>(n_);
  HeapIndex::Sections& x = index.s_;
  x.node_offset = node_offset();
  x.node_class = node_class();
  x.node_size8 = node_size8();
  x.edge_begin = edge_begin();
  x.edge_target = edge_target().first(edge_count);
  x.idom = idom();
  x.retained = retained();
  x.id_table = id_table();
  x.weak_edges = index.owned->weak_edges;
  x.roots = index.owned->roots;
  // Before the spans are handed out to queries: walked once here, saved below, read on reopen.
  index.summary = summarize_index(index);
  if (saving()) {
    // The small sections follow the references; then the header, with each section's checksum
    // and its own.
    std::vector<uint8_t> meta = encode_meta(index);
    std::vector<uint8_t> summary = encode_summary(index.summary);
    std::span<const uint8_t> parts[kSections] = {
        bytes_of(x.node_offset), bytes_of(x.node_class),
        bytes_of(x.node_size8),  bytes_of(x.edge_begin),
        bytes_of(x.edge_target), bytes_of(x.weak_edges),
        bytes_of(x.roots),       bytes_of(x.idom),
        bytes_of(x.retained),    std::span<const uint8_t>(meta),
        bytes_of(x.id_table),    std::span<const uint8_t>(summary)};
    FileHeader h{};
    std::memcpy(h.magic, kMagic, 8);
    h.version = kVersion;
    h.endian_mark = kEndianMark;
    h.dump_size = dump_.size;
    h.dump_mtime_ns = dump_.mtime_ns;
    h.id_size = index.header.id_size;
    h.node_count = static_cast<uint32_t>(n_);
    h.timestamp_ms = index.header.timestamp_ms;
    const IndexCounts& c = index.counts;
    uint64_t counts[11] = {c.unresolved_roots,   c.dangling_refs,    c.duplicate_ids,
                           c.strongly_reachable, c.weakly_reachable, c.unknown_class_objects,
                           c.unknown_classes,    c.first_dangling,   c.first_unknown_class,
                           c.filler_objects,     c.filler_bytes};
    std::memcpy(h.counts, counts, sizeof counts);
    h.class_class = index.class_class;
    h.class_count = static_cast<uint32_t>(index.classes.size());
    for (int i = 0; i < kSections; ++i)
      h.sections[i] = {offset_[i], parts[i].size(), checksum_of(parts[i])};
    uint64_t at = align8(offset_[kEdgeTarget] + 4 * edge_count);
    bool ok = true;
    for (IndexSection i : {kWeakEdges, kRoots, kMeta, kSummary}) {
      h.sections[i].offset = at;
      static const uint8_t zeros[8] = {};
      const uint64_t pad = align8(parts[i].size()) - parts[i].size();
      ok = ok && write_all_at(fd_, parts[i].data(), parts[i].size(), at) &&
           write_all_at(fd_, zeros, pad, at + parts[i].size());
      at += parts[i].size() + pad;
    }
    h.index_size = at;
    h.checksum = checksum_of({reinterpret_cast<const uint8_t*>(&h), sizeof h});
    // The file shrinks to what was used: the reserve beyond it is never touched again.
    ok = ok && write_all_at(fd_, &h, sizeof h, 0) && ::ftruncate(fd_, static_cast<off_t>(at)) == 0;
    if (ok && ::rename(tmp_path_.c_str(), final_path_.c_str()) == 0) tmp_path_.clear();
  }
  index.mapped = MappedFile::adopt(base_, reserved_);
  base_ = nullptr;
}

namespace {

const char* const kSectionNames[kSections] = {
    "object offsets", "object classes",  "object sizes", "reference starts",
    "references",     "weak references", "GC roots",     "dominators",
    "retained sizes", "classes",         "id table",     "summary"};

// Sums `section` (a whole number of T) in pieces of 8192 elements, each piece handed to
// `valid` (its elements in range?) while still in cache. False at the first bad piece or if the
// sum is not `expected`.
template <typename T, typename Valid>
bool sum_and_check(std::span<const T> section, uint64_t expected, Valid&& valid) {
  Checksum sum;
  constexpr size_t kPiece = 8192;
  for (size_t at = 0; at < section.size(); at += kPiece) {
    const std::span<const T> piece = section.subspan(at, std::min(kPiece, section.size() - at));
    sum.add(piece.data(), piece.size_bytes());
    if (!valid(piece)) return false;
  }
  return sum.value() == expected;
}

template <typename T>
bool sum_only(std::span<const T> section, uint64_t expected) {
  return sum_and_check(section, expected, [](std::span<const T>) { return true; });
}

// The section's checksum, the zero padding after it, and that every node, class or edge number
// in it is in range (so no query can be sent out of bounds by a wrong index).
bool section_intact(const HeapIndex& index, const HeapIndex::Sections& x, IndexSection s,
                    uint64_t expected) {
  const uint64_t n = index.node_count;
  const auto node_ok = [n](uint32_t v) { return v < n; };
  switch (s) {
    case kNodeOffset:
      return sum_only(x.node_offset, expected);
    case kNodeClass: {
      const uint64_t classes = index.classes.size();
      return sum_and_check(x.node_class, expected, [&](std::span<const uint32_t> piece) {
        return std::all_of(piece.begin(), piece.end(), [&](uint32_t k) { return k < classes; });
      });
    }
    case kNodeSize8:
      return sum_only(x.node_size8, expected);
    case kEdgeBegin: {
      if (x.edge_begin.size() != n + 1 || x.edge_begin[0] != 0 ||
          x.edge_begin[n] != x.edge_target.size())
        return false;
      uint64_t previous = 0;
      return sum_and_check(x.edge_begin, expected, [&](std::span<const uint64_t> piece) {
        for (uint64_t e : piece) {
          if (e < previous) return false;
          previous = e;
        }
        return true;
      });
    }
    case kEdgeTarget:
      return sum_and_check(x.edge_target, expected, [&](std::span<const uint32_t> piece) {
        return std::all_of(piece.begin(), piece.end(), node_ok);
      });
    case kWeakEdges:
      return sum_and_check(x.weak_edges, expected, [&](std::span<const Edge> piece) {
        return std::all_of(piece.begin(), piece.end(),
                           [&](const Edge& e) { return node_ok(e.from) && node_ok(e.to); });
      });
    case kRoots:
      return sum_and_check(x.roots, expected, [&](std::span<const RootEntry> piece) {
        return std::all_of(piece.begin(), piece.end(),
                           [&](const RootEntry& r) { return node_ok(r.node); });
      });
    case kIdom:
      return sum_and_check(x.idom, expected, [&](std::span<const uint32_t> piece) {
        return std::all_of(piece.begin(), piece.end(),
                           [&](uint32_t d) { return d <= n || d == kNone; });
      });
    case kRetained:
      return sum_only(x.retained, expected);
    case kIdTable:
      return sum_and_check(x.id_table, expected, [&](std::span<const uint32_t> piece) {
        return std::all_of(piece.begin(), piece.end(),
                           [&](uint32_t v) { return v < n || v == kNone; });
      });
    default:
      return false;
  }
}

// The padding after a section (to the next multiple of 8) is zero, so every byte of the file
// is checked by the time every section has been.
bool padding_zero(std::span<const uint8_t> file, const Section& s) {
  for (uint64_t at = s.offset + s.bytes; at % 8 != 0 && at < file.size(); ++at)
    if (file[at] != 0) return false;
  return true;
}

}  // namespace

LazySections::LazySections() = default;
LazySections::~LazySections() = default;

void HeapIndex::check_section(IndexSection s) const {
  std::lock_guard lock(lazy->mu ? *lazy->mu : lazy->own_mu);
  const uint32_t bit = 1u << s;
  if ((lazy->unchecked.load(std::memory_order_relaxed) & bit) == 0) return;  // checked meanwhile
  const Section& entry = reinterpret_cast<const FileHeader*>(mapped.bytes().data())->sections[s];
  if (padding_zero(mapped.bytes(), entry) && section_intact(*this, s_, s, lazy->checksum[s])) {
    lazy->unchecked.fetch_and(~bit, std::memory_order_release);
    return;
  }
  // Never used unchecked: one line, then the index is built again from the dump (and saved over
  // the bad one), and its sections serve every section of this one not yet checked. The sections
  // already checked stay: the build is deterministic, so they equal the new ones.
  std::fprintf(stderr,
               "jvmprof: %s: the index's %s section is corrupt (checksum or range check failed "
               "on first use); rebuilding the index from the dump\n",
               lazy->path.c_str(), kSectionNames[s]);
  std::unique_ptr<HeapIndex> fresh = lazy->rebuild ? lazy->rebuild() : nullptr;
  if (!fresh)
    throw Error(lazy->path + ": the index's " + kSectionNames[s] +
                " section is corrupt; delete the index file to rebuild it");
  if (fresh->node_count != node_count || fresh->classes.size() != classes.size() ||
      fresh->s_.edge_target.size() != s_.edge_target.size() ||
      fresh->s_.weak_edges.size() != s_.weak_edges.size() ||
      fresh->s_.roots.size() != s_.roots.size())
    throw Error(lazy->path + ": the dump no longer matches its index (rebuilt while open)");
  const uint32_t pending = lazy->unchecked.load(std::memory_order_relaxed);
  const HeapIndex::Sections& y = fresh->s_;
  if (pending & (1u << kNodeOffset)) s_.node_offset = y.node_offset;
  if (pending & (1u << kNodeClass)) s_.node_class = y.node_class;
  if (pending & (1u << kNodeSize8)) s_.node_size8 = y.node_size8;
  if (pending & (1u << kEdgeBegin)) s_.edge_begin = y.edge_begin;
  if (pending & (1u << kEdgeTarget)) s_.edge_target = y.edge_target;
  if (pending & (1u << kWeakEdges)) s_.weak_edges = y.weak_edges;
  if (pending & (1u << kRoots)) s_.roots = y.roots;
  if (pending & (1u << kIdom)) s_.idom = y.idom;
  if (pending & (1u << kRetained)) s_.retained = y.retained;
  if (pending & (1u << kIdTable)) s_.id_table = y.id_table;
  lazy->replacement = std::move(fresh);
  lazy->rebuilt.store(true, std::memory_order_release);
  lazy->unchecked.store(0, std::memory_order_release);
}

std::unique_ptr<HeapIndex> load_index(const std::string& path, const DumpIdentity& dump) {
  if (::access(path.c_str(), R_OK) != 0) return nullptr;
  MappedFile file;
  try {
    file = MappedFile::open(path, false);
  } catch (const std::exception&) {
    return nullptr;
  }
  std::span<const uint8_t> bytes = file.bytes();
  if (bytes.size() < sizeof(FileHeader)) return nullptr;
  FileHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, 8) != 0 || h.version != kVersion ||
      h.endian_mark != kEndianMark || h.dump_size != dump.size ||
      h.dump_mtime_ns != dump.mtime_ns || h.index_size != bytes.size() ||
      (h.id_size != 4 && h.id_size != 8) || h.node_count >= kNone - 1)
    return nullptr;
  // Reopen checks the header (with the section table and its checksums) and the class section;
  // the other sections are checked on first use (HeapIndex::check_section).
  FileHeader unsummed = h;
  unsummed.checksum = 0;
  if (checksum_of({reinterpret_cast<const uint8_t*>(&unsummed), sizeof unsummed}) != h.checksum)
    return nullptr;
  const uint64_t n = h.node_count;
  for (const Section& s : h.sections)
    if (s.offset % 8 != 0 || s.offset < sizeof(FileHeader) || s.offset > bytes.size() ||
        s.bytes > bytes.size() - s.offset)
      return nullptr;
  auto section = [&]<typename T>(int i, T*) -> std::span<const T> {
    const Section& s = h.sections[i];
    if (s.bytes % sizeof(T) != 0) return {};
    return {reinterpret_cast<const T*>(bytes.data() + s.offset), s.bytes / sizeof(T)};
  };
  auto index = std::make_unique<HeapIndex>();
  index->node_count = h.node_count;
  HeapIndex::Sections& x = index->s_;
  x.node_offset = section(kNodeOffset, static_cast<uint64_t*>(nullptr));
  x.node_class = section(kNodeClass, static_cast<uint32_t*>(nullptr));
  x.node_size8 = section(kNodeSize8, static_cast<uint32_t*>(nullptr));
  x.edge_begin = section(kEdgeBegin, static_cast<uint64_t*>(nullptr));
  x.edge_target = section(kEdgeTarget, static_cast<uint32_t*>(nullptr));
  x.weak_edges = section(kWeakEdges, static_cast<Edge*>(nullptr));
  x.roots = section(kRoots, static_cast<RootEntry*>(nullptr));
  x.idom = section(kIdom, static_cast<uint32_t*>(nullptr));
  x.retained = section(kRetained, static_cast<uint64_t*>(nullptr));
  x.id_table = section(kIdTable, static_cast<uint32_t*>(nullptr));
  const Section& weak = h.sections[kWeakEdges];
  const Section& roots = h.sections[kRoots];
  if (x.node_offset.size() != n || x.node_class.size() != n || x.node_size8.size() != n ||
      x.edge_begin.size() != n + 1 || x.idom.size() != n || x.retained.size() != n ||
      x.id_table.size() != id_table_slots(n) ||
      x.edge_target.size() * 4 != h.sections[kEdgeTarget].bytes ||
      x.weak_edges.size() * sizeof(Edge) != weak.bytes ||
      x.roots.size() * sizeof(RootEntry) != roots.bytes)
    return nullptr;
  const Section& meta_section = h.sections[kMeta];
  const std::span<const uint8_t> meta_bytes =
      bytes.subspan(meta_section.offset, meta_section.bytes);
  if (checksum_of(meta_bytes) != meta_section.checksum || !padding_zero(bytes, meta_section))
    return nullptr;
  MetaReader meta(meta_bytes);
  index->header.format = meta.str();
  index->header.id_size = h.id_size;
  index->header.timestamp_ms = h.timestamp_ms;
  index->class_class = h.class_class;
  if (h.class_count > meta_section.bytes / 8 || h.class_class >= h.class_count) return nullptr;
  index->classes.resize(h.class_count);
  for (ClassInfo& k : index->classes) {
    k.id = meta.u64();
    k.object = meta.u32();
    k.super = meta.u32();
    k.loader_id = meta.u64();
    uint32_t kind = meta.u32();
    k.kind = static_cast<ClassKind>(kind & 0xFF);
    k.element_type = static_cast<uint8_t>(kind >> 8);
    k.data_size = meta.u32();
    k.instance_size = meta.u32();
    k.name = meta.str();
    uint32_t fields = meta.u32();
    if (!meta.ok() || fields > meta_section.bytes / 8) return nullptr;
    k.fields.resize(fields);
    for (FieldInfo& f : k.fields) {
      f.type = static_cast<uint8_t>(meta.u32());
      f.name = meta.str();
    }
    if (!meta.ok() || (k.object != kNone && k.object >= n) ||
        (k.super != kNone && k.super >= h.class_count) || (kind & 0xFF) > 2)
      return nullptr;
  }
  if (!meta.ok() || !meta.at_end()) return nullptr;
  // The summary section, as small as the class table, is checked here too.
  const Section& summary_section = h.sections[kSummary];
  const std::span<const uint8_t> summary_bytes =
      bytes.subspan(summary_section.offset, summary_section.bytes);
  if (checksum_of(summary_bytes) != summary_section.checksum ||
      !padding_zero(bytes, summary_section))
    return nullptr;
  std::optional<IndexSummary> summary = decode_summary(summary_bytes, n, h.class_count);
  if (!summary) return nullptr;
  index->summary = std::move(*summary);
  index->counts = {h.counts[0], h.counts[1], h.counts[2], h.counts[3], h.counts[4], h.counts[5],
                   h.counts[6], h.counts[7], h.counts[8], h.counts[9], h.counts[10]};
  index->lazy = std::make_unique<LazySections>();
  index->lazy->path = path;
  for (int i = 0; i < kSections; ++i) index->lazy->checksum[i] = h.sections[i].checksum;
  index->lazy->unchecked.store(((1u << kSections) - 1) & ~(1u << kMeta) & ~(1u << kSummary));
  index->mapped = std::move(file);
  return index;
}

std::vector<std::pair<uint64_t, uint64_t>> index_file_layout(const std::string& path) {
  MappedFile file;
  try {
    file = MappedFile::open(path, false);
  } catch (const std::exception&) {
    return {};
  }
  FileHeader h;
  if (file.bytes().size() < sizeof h) return {};
  std::memcpy(&h, file.bytes().data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, 8) != 0 || h.version != kVersion) return {};
  std::vector<std::pair<uint64_t, uint64_t>> out{{0, sizeof h}};
  for (const Section& s : h.sections) out.emplace_back(s.offset, s.bytes);
  return out;
}

}  // namespace analysis::detail
