// The saved index: DUMP.jvmprof-index, a header and eleven 8-byte-aligned sections in host byte
// order, mapped back on reopen (no parsing of the node arrays, so reopening costs one checksum
// pass and one validation pass over them). Valid only for the dump of the recorded size and
// mtime and for this format version; anything else, or any inconsistency, means "rebuild".
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "analysis.h"
#include "heap_index.h"
#include "id_table.h"

namespace analysis::detail {

namespace {

constexpr char kMagic[8] = {'J', 'V', 'M', 'P', 'I', 'D', 'X', '\n'};
constexpr uint32_t kVersion = 2;  // 2: the id table section
constexpr uint32_t kEndianMark = 0x01020304;
constexpr int kSections = 11;

struct Section {
  uint64_t offset;
  uint64_t bytes;
};

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t endian_mark;
  uint64_t dump_size;
  int64_t dump_mtime_ns;
  uint64_t index_size;
  uint64_t checksum;  // of the header (this field as 0) and every section
  uint32_t id_size;
  uint32_t node_count;
  uint64_t timestamp_ms;
  uint64_t counts[5];
  uint32_t class_class;
  uint32_t class_count;
  Section sections[kSections];
};
static_assert(std::is_trivially_copyable_v<FileHeader> && sizeof(FileHeader) % 8 == 0);

// FNV-style mixing of 8-byte words; a changed bit anywhere changes the sum.
class Checksum {
 public:
  void add(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    uint64_t tail = 0;
    if (i < size) {
      std::memcpy(&tail, p + i, size - i);
      mix(tail ^ (uint64_t{size - i} << 56));
    }
  }
  uint64_t value() const { return h_; }

 private:
  void mix(uint64_t w) {
    h_ = (h_ ^ w) * 0x100000001b3ull;
    h_ ^= h_ >> 29;
  }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

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

IndexBuilder::IndexBuilder(const std::string& index_path, bool save, const DumpIdentity& dump)
    : index_path_(index_path), save_(save), dump_(dump) {
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
    if (fd_ >= 0) ::close(fd_);
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
  const std::pair<SectionId, uint64_t> order[] = {{kNodeOffset, 8 * n},
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
  index.node_offset = node_offset();
  index.node_class = node_class();
  index.node_size8 = node_size8();
  index.edge_begin = edge_begin();
  index.edge_target = edge_target().first(edge_count);
  index.idom = idom();
  index.retained = retained();
  index.id_table = id_table();
  index.weak_edges = index.owned->weak_edges;
  index.roots = index.owned->roots;
  if (saving()) {
    // The small sections follow the references; then the header, with the checksum of all.
    std::vector<uint8_t> meta = encode_meta(index);
    std::span<const uint8_t> parts[kSections] = {
        bytes_of(index.node_offset),    bytes_of(index.node_class),  bytes_of(index.node_size8),
        bytes_of(index.edge_begin),     bytes_of(index.edge_target), bytes_of(index.weak_edges),
        bytes_of(index.roots),          bytes_of(index.idom),        bytes_of(index.retained),
        std::span<const uint8_t>(meta), bytes_of(index.id_table)};
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
    uint64_t counts[5] = {c.unresolved_roots, c.dangling_refs, c.duplicate_ids,
                          c.strongly_reachable, c.weakly_reachable};
    std::memcpy(h.counts, counts, sizeof counts);
    h.class_class = index.class_class;
    h.class_count = static_cast<uint32_t>(index.classes.size());
    for (int i = 0; i < kSections; ++i) h.sections[i] = {offset_[i], parts[i].size()};
    uint64_t at = align8(offset_[kEdgeTarget] + 4 * edge_count);
    bool ok = true;
    for (SectionId i : {kWeakEdges, kRoots, kMeta}) {
      h.sections[i].offset = at;
      static const uint8_t zeros[8] = {};
      const uint64_t pad = align8(parts[i].size()) - parts[i].size();
      ok = ok && write_all_at(fd_, parts[i].data(), parts[i].size(), at) &&
           write_all_at(fd_, zeros, pad, at + parts[i].size());
      at += parts[i].size() + pad;
    }
    h.index_size = at;
    Checksum sum;
    for (int i = 0; i < kSections; ++i) sum.add(parts[i].data(), parts[i].size());
    sum.add(&h, sizeof h);
    h.checksum = sum.value();
    // The file shrinks to what was used: the reserve beyond it is never touched again.
    ok = ok && write_all_at(fd_, &h, sizeof h, 0) && ::ftruncate(fd_, static_cast<off_t>(at)) == 0;
    if (ok && ::rename(tmp_path_.c_str(), final_path_.c_str()) == 0) tmp_path_.clear();
  }
  index.mapped = MappedFile::adopt(base_, reserved_);
  base_ = nullptr;
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
  const uint64_t n = h.node_count;
  Checksum sum;
  for (const Section& s : h.sections) {
    if (s.offset % 8 != 0 || s.offset > bytes.size() || s.bytes > bytes.size() - s.offset)
      return nullptr;
    sum.add(bytes.data() + s.offset, s.bytes);
    // The alignment padding after a section is zero (so every byte of the file is checked).
    for (uint64_t at = s.offset + s.bytes; at % 8 != 0 && at < bytes.size(); ++at)
      if (bytes[at] != 0) return nullptr;
  }
  FileHeader unsummed = h;
  unsummed.checksum = 0;
  sum.add(&unsummed, sizeof unsummed);
  if (sum.value() != h.checksum) return nullptr;
  auto section = [&]<typename T>(int i, T*) -> std::span<const T> {
    const Section& s = h.sections[i];
    if (s.bytes % sizeof(T) != 0) return {};
    return {reinterpret_cast<const T*>(bytes.data() + s.offset), s.bytes / sizeof(T)};
  };
  auto index = std::make_unique<HeapIndex>();
  index->node_count = h.node_count;
  index->node_offset = section(0, static_cast<uint64_t*>(nullptr));
  index->node_class = section(1, static_cast<uint32_t*>(nullptr));
  index->node_size8 = section(2, static_cast<uint32_t*>(nullptr));
  index->edge_begin = section(3, static_cast<uint64_t*>(nullptr));
  index->edge_target = section(4, static_cast<uint32_t*>(nullptr));
  index->weak_edges = section(5, static_cast<Edge*>(nullptr));
  index->roots = section(6, static_cast<RootEntry*>(nullptr));
  index->idom = section(7, static_cast<uint32_t*>(nullptr));
  index->retained = section(8, static_cast<uint64_t*>(nullptr));
  index->id_table = section(10, static_cast<uint32_t*>(nullptr));
  if (index->node_offset.size() != n || index->node_class.size() != n ||
      index->node_size8.size() != n || index->edge_begin.size() != n + 1 ||
      index->idom.size() != n || index->retained.size() != n ||
      index->id_table.size() != id_table_slots(n))
    return nullptr;
  MetaReader meta(bytes.subspan(h.sections[9].offset, h.sections[9].bytes));
  index->header.format = meta.str();
  index->header.id_size = h.id_size;
  index->header.timestamp_ms = h.timestamp_ms;
  index->class_class = h.class_class;
  if (h.class_count > h.sections[9].bytes / 8 || h.class_class >= h.class_count) return nullptr;
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
    if (!meta.ok() || fields > h.sections[9].bytes / 8) return nullptr;
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
  // Everything used as an index is checked, so a wrong index cannot send a query out of bounds.
  const uint64_t edges = index->edge_target.size();
  if (index->edge_begin[0] != 0 || index->edge_begin[n] != edges) return nullptr;
  for (uint64_t v = 0; v < n; ++v) {
    if (index->edge_begin[v] > index->edge_begin[v + 1] || index->node_class[v] >= h.class_count ||
        (index->idom[v] > n && index->idom[v] != kNone))
      return nullptr;
  }
  for (uint32_t t : index->edge_target)
    if (t >= n) return nullptr;
  for (const Edge& e : index->weak_edges)
    if (e.from >= n || e.to >= n) return nullptr;
  for (const RootEntry& r : index->roots)
    if (r.node >= n) return nullptr;
  index->counts = {h.counts[0], h.counts[1], h.counts[2], h.counts[3], h.counts[4]};
  index->mapped = std::move(file);
  return index;
}

}  // namespace analysis::detail
