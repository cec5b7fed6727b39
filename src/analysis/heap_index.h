// SPDX-License-Identifier: Apache-2.0
// Internal: the index of one heap dump — what the indexer builds, the index file stores and the
// queries read. Node arrays are spans so they can point into owned vectors or a mapped index.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "dominators.h"
#include "mapped_file.h"

namespace analysis::detail {

enum class ClassKind : uint8_t { kInstance = 0, kObjectArray = 1, kPrimitiveArray = 2 };

struct FieldInfo {
  std::string name;
  uint8_t type = 0;  // HPROF basic type code
};

struct ClassInfo {
  uint64_t id = 0;          // class object id; 0 for a class made up for primitive arrays
  uint32_t object = kNone;  // node of the class object
  std::string name;         // Java name: java.lang.String, int[], java.lang.Object[]
  uint32_t super = kNone;   // class index
  uint64_t loader_id = 0;
  ClassKind kind = ClassKind::kInstance;
  uint8_t element_type = 0;       // primitive arrays: HPROF basic type
  uint32_t data_size = 0;         // instance field bytes in the dump, whole superclass chain
  uint32_t instance_size = 0;     // shallow size of an instance in the VM
  std::vector<FieldInfo> fields;  // instance fields declared by this class
};

struct RootEntry {
  uint32_t node;
  uint32_t thread_serial;
  uint8_t kind;  // HPROF root sub-record tag
  uint8_t pad[3];
};

struct DumpHeader {
  std::string format;
  uint32_t id_size = 0;
  uint64_t timestamp_ms = 0;
};

constexpr uint64_t kNoOffset = ~uint64_t{0};
// The histogram row of int[]s at G1's filler layout (indexer.cpp, mark_fillers).
inline constexpr const char* kFillerRow = "int[] (unreachable, G1 filler layout)";

// Counters the indexer keeps for the summary. Damage (dangling references, objects of classes
// the dump never defined) is counted with the first offending record's offset.
struct IndexCounts {
  uint64_t unresolved_roots = 0;  // root records naming objects not in the dump
  uint64_t dangling_refs = 0;     // references to objects not in the dump
  uint64_t duplicate_ids = 0;
  uint64_t strongly_reachable = 0;
  uint64_t weakly_reachable = 0;
  uint64_t unknown_class_objects = 0;        // instances and arrays of classes with no CLASS DUMP
  uint64_t unknown_classes = 0;              // distinct such class ids
  uint64_t first_dangling = kNoOffset;       // sub-record holding the first dangling reference
  uint64_t first_unknown_class = kNoOffset;  // sub-record of the first such object
  uint64_t filler_objects = 0;               // G1 filler arrays dumped as int[] (see mark_fillers)
  uint64_t filler_bytes = 0;
};

// What summary() and the class histogram report, a pure function of the index: computed once
// when the index is built (summarize_index, walking every object and the dominator tree) and
// saved with it (the summary section), so a reopened dump answers them without that walk.
struct IndexSummary {
  uint64_t instances = 0, object_arrays = 0, primitive_arrays = 0, classes = 0;
  uint64_t gc_roots = 0;  // distinct objects named by root records
  uint64_t shallow_bytes = 0;
  uint64_t reachable_objects = 0, reachable_bytes = 0;
  uint64_t unreachable_objects = 0, unreachable_bytes = 0;
  struct ClassTotals {
    uint64_t instances = 0, shallow_bytes = 0;
    uint64_t retained_bytes = 0;  // its instances with no instance of it above them
    bool operator==(const ClassTotals&) const = default;
  };
  std::vector<ClassTotals> per_class;  // by class index
  bool operator==(const IndexSummary&) const = default;
};

// The sections of an index file, in the order of its section table.
enum IndexSection : int {
  kNodeOffset,
  kNodeClass,
  kNodeSize8,
  kEdgeBegin,
  kEdgeTarget,
  kWeakEdges,
  kRoots,
  kIdom,
  kRetained,
  kMeta,
  kIdTable,
  kSummary,
  kSectionCount
};

struct HeapIndex;

// A reopened index's sections are checked (checksum and ranges) on first use, not on reopen, so a
// query reads and checks only the sections it needs. A section that fails its check is reported
// (one line on stderr) and the index rebuilt from the dump; the rebuilt index then serves every
// section not yet checked (index_file.cpp).
struct LazySections {
  LazySections();
  ~LazySections();
  std::atomic<uint32_t> unchecked{0};  // bit per IndexSection
  uint64_t checksum[kSectionCount] = {};
  std::string path;                    // of the index file, for the message
  std::recursive_mutex* mu = nullptr;  // the HeapDump's lock for lazily built state
  std::recursive_mutex own_mu;         // used if `mu` was not set
  std::function<std::unique_ptr<HeapIndex>()> rebuild;  // a new index from the dump
  std::unique_ptr<HeapIndex> replacement;               // after a rebuild
  std::atomic<bool> rebuilt{false};
};

struct HeapIndex {
  DumpHeader header;
  IndexCounts counts;
  uint32_t node_count = 0;
  std::vector<ClassInfo> classes;
  uint32_t class_class = kNone;  // java.lang.Class
  IndexSummary summary;          // built with the index, or read from its summary section

  // The node and edge sections. Each accessor checks its section first if it is unchecked (an
  // atomic load otherwise): hot loops take the span once.
  std::span<const uint64_t> node_offset() const { return ready(kNodeOffset, s_.node_offset); }
  std::span<const uint32_t> node_class() const { return ready(kNodeClass, s_.node_class); }
  std::span<const uint32_t> node_size8() const { return ready(kNodeSize8, s_.node_size8); }
  std::span<const uint64_t> edge_begin() const { return ready(kEdgeBegin, s_.edge_begin); }
  std::span<const uint32_t> edge_target() const { return ready(kEdgeTarget, s_.edge_target); }
  std::span<const Edge> weak_edges() const { return ready(kWeakEdges, s_.weak_edges); }
  std::span<const RootEntry> roots() const { return ready(kRoots, s_.roots); }
  std::span<const uint32_t> idom() const { return ready(kIdom, s_.idom); }
  std::span<const uint64_t> retained() const { return ready(kRetained, s_.retained); }
  std::span<const uint32_t> id_table() const { return ready(kIdTable, s_.id_table); }

  uint64_t shallow(uint32_t node) const { return uint64_t{node_size8()[node]} * 8; }
  // True once a section failed its check and the index was rebuilt from the dump.
  bool rebuilt() const { return lazy && lazy->rebuilt.load(std::memory_order_acquire); }

  struct Sections {
    std::span<const uint64_t> node_offset;  // file offset of each object's sub-record
    std::span<const uint32_t> node_class;   // class index
    std::span<const uint32_t> node_size8;   // shallow size / 8
    std::span<const uint64_t> edge_begin;   // strong references, CSR
    std::span<const uint32_t> edge_target;
    std::span<const Edge> weak_edges;
    std::span<const RootEntry> roots;
    std::span<const uint32_t> idom;      // kNone unreachable, node_count: the super-root
    std::span<const uint64_t> retained;  // bytes
    // id -> node: an open-addressing table of nodes (kNone: empty), id_table.h; ids are read
    // back from the dump at node_offset.
    std::span<const uint32_t> id_table;
  };
  // Set by the builder and the loader only; queries go through the accessors above. Mutable: a
  // rebuild after a failed check points the sections not yet checked at the new index.
  mutable Sections s_;
  // A reopened index: its sections' checksums and which are still unchecked. Null when built.
  std::unique_ptr<LazySections> lazy;

  // Storage behind the spans: the index file, mapped (a new index is built in it, see
  // IndexBuilder), and for a new index the two small arrays, kept in memory.
  MappedFile mapped;
  struct Owned {
    std::vector<Edge> weak_edges;
    std::vector<RootEntry> roots;
  };
  std::unique_ptr<Owned> owned;

 private:
  template <typename T>
  std::span<const T> ready(IndexSection s, const std::span<const T>& span) const {
    if (lazy && (lazy->unchecked.load(std::memory_order_acquire) >> s & 1)) [[unlikely]]
      check_section(s);
    return span;
  }
  // Checks section `s` once, under lazy->mu; if it fails, rebuilds (index_file.cpp).
  void check_section(IndexSection s) const;
};

// The saved index: written beside the dump, valid while the dump's size and mtime match.
struct DumpIdentity {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// A new index under construction, in an index file mapped read-write: its big arrays are file
// pages the kernel can write back and drop (as it can the dump's), not anonymous memory.
// When saving, it is a temporary beside `index_path` that finish() renames into place;
// otherwise, or if that cannot be written, an unlinked scratch file beside `index_path`, else in
// $TMPDIR (else /tmp), else a memfd.
// The object offsets, the first section, are appended while pass 1 finds the objects (plain
// writes from a small buffer: no array growing by doubling, no copy afterwards); once the count
// is known, reserve() places the other sections after them, reserves their space up front
// (posix_fallocate, so writing through the mapping cannot fault) and maps the file.
// A line for the user about where the index goes (OpenOptions::on_notice); may be empty.
using NoticeFn = std::function<void(const std::string&)>;

// The index file's size, estimated from the dump's before it is read: 1.13x the dump, the
// largest ratio measured (docs/heap-analysis.md, "Where the index goes").
uint64_t estimated_index_bytes(uint64_t dump_bytes);

// Where a new index starts (IndexBuilder's places: 0 the saved file beside the dump, 2 a
// scratch file in $TMPDIR, 3 memory) and the line saying so: the saved file when the file system
// of `index_path` has `estimate` bytes free (`room_in(dir)`: free bytes), else the first
// fallback that has them. A scratch index (save false) with room says nothing.
struct IndexPlace {
  int place = 0;
  std::string notice;
};
IndexPlace plan_index_place(const std::string& index_path, bool save, uint64_t estimate,
                            const std::function<uint64_t(const std::string&)>& room_in);

class IndexBuilder {
 public:
  // Says where the index goes and, when the file system beside it has less room than
  // `estimate`, starts at the first fallback place that has it (and says so).
  IndexBuilder(const std::string& index_path, bool save, const DumpIdentity& dump,
               uint64_t estimate = 0, const NoticeFn& notice = nullptr);
  ~IndexBuilder();
  IndexBuilder(const IndexBuilder&) = delete;
  IndexBuilder& operator=(const IndexBuilder&) = delete;

  // Pass 1: the dump offsets of the next objects. Throws Error if no file can take them.
  void append_node_offsets(std::span<const uint64_t> offsets);
  uint64_t node_count() const { return n_; }
  // After pass 1: room for the appended objects' sections and up to max_edges references,
  // mapped. Throws Error if no file can take them.
  void reserve(uint64_t max_edges);

  // After reserve():
  std::span<uint64_t> node_offset() { return at<uint64_t>(kNodeOffset, n_); }
  std::span<uint32_t> node_class() { return at<uint32_t>(kNodeClass, n_); }
  std::span<uint32_t> node_size8() { return at<uint32_t>(kNodeSize8, n_); }
  std::span<uint64_t> edge_begin() { return at<uint64_t>(kEdgeBegin, n_ + 1); }
  std::span<uint32_t> edge_target() { return at<uint32_t>(kEdgeTarget, max_edges_); }
  std::span<uint32_t> idom() { return at<uint32_t>(kIdom, n_); }
  std::span<uint64_t> retained() { return at<uint64_t>(kRetained, n_); }
  std::span<uint32_t> id_table();
  bool saving() const { return !final_path_.empty(); }

  // Points `index`'s node and edge spans at the file (edge_count references used); when saving,
  // writes the small sections and the header and renames the file into place (an index that
  // cannot be written is simply not saved). `index.owned` holds the weak edges and roots.
  void finish(HeapIndex& index, uint64_t edge_count);

 private:
  template <typename T>
  std::span<T> at(IndexSection s, uint64_t count) {
    return {reinterpret_cast<T*>(base_ + offset_[s]), static_cast<size_t>(count)};
  }
  bool next_file();
  int open_place(int place);
  void choose_first_place(uint64_t estimate);
  NoticeFn notice_;
  bool map_reserved();

  std::string index_path_;
  bool save_;
  int place_ = 0;  // the next place next_file() tries
  uint64_t n_ = 0;
  uint64_t max_edges_ = 0;
  DumpIdentity dump_;
  uint64_t offset_[kSectionCount] = {};
  uint64_t reserved_ = 0;
  int fd_ = -1;
  uint8_t* base_ = nullptr;
  std::string tmp_path_, final_path_;
};

// Builds the index of the dump in `file` (a whole mapped dump), saved at `index_path` if `save`
// (see IndexBuilder). Throws Error on malformed input.
HeapIndex build_index(std::span<const uint8_t> file, const ProgressFn& progress,
                      const std::string& index_path, bool save, const DumpIdentity& dump,
                      const NoticeFn& notice = nullptr);
// The summary of `index` computed from its node sections and dominator tree: every object is
// visited (and the tree built, 8 bytes per object while it runs). The builder of the saved
// summary section, and the reference the tests compare that section with.
IndexSummary summarize_index(const HeapIndex& index);
// The dominator tree as children lists (compressed rows): node v's children are
// child[begin[v] .. begin[v + 1]), in node order; node_count stands for the super-root above
// the roots. Unreachable nodes are in no list.
struct DominatorChildren {
  std::vector<uint32_t> begin;  // node_count + 2 entries
  std::vector<uint32_t> child;
};
DominatorChildren dominator_children(const HeapIndex& index);
// Empty if missing, stale, of another version or corrupt (the caller rebuilds it).
std::unique_ptr<HeapIndex> load_index(const std::string& path, const DumpIdentity& dump);
// Where the header and each IndexSection of the saved index at `path` lie, as {offset, bytes}
// (the header first, then the sections in IndexSection order); empty if it is not a readable
// index of this version. For tests and tools that inspect index files.
std::vector<std::pair<uint64_t, uint64_t>> index_file_layout(const std::string& path);

// Java name of an HPROF class name: "java/lang/String" -> "java.lang.String", "[I" -> "int[]".
std::string java_class_name(std::string_view hprof_name);
// Java name of an array element type code ("int").
const char* primitive_name(uint8_t type);

}  // namespace analysis::detail
