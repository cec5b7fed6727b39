// SPDX-License-Identifier: Apache-2.0
// The heap analyzer: reads binary HPROF heap dumps (JAVA PROFILE 1.0.1/1.0.2, identifier size 4
// or 8, optionally gzip-compressed) and answers the questions a leak hunt asks: what is on the
// heap, who retains it, how it is reached, which strings are duplicated, what grew, what leaks.
// HPROF text profiles (format=a) with a HEAP DUMP section open too: their newest complete dump
// is converted to a binary dump beside them (FILE.jvmprof-heap.hprof) and indexed as one.
//
// A dump is memory-mapped and indexed once (object offsets, references in CSR form, dominator
// tree, retained sizes); the index is saved beside the dump as DUMP.jvmprof-index and reused
// while the dump's size and modification time match. docs/heap-analysis.md has the details.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace analysis {

// Malformed input or an I/O failure; what() is one line naming the byte offset and the record.
class Error : public std::runtime_error {
 public:
  // Names from the dump (class names, strings) are untrusted: control characters in the message
  // are shown as \xNN so the error stays one line.
  explicit Error(const std::string& message) : std::runtime_error(one_line(message)) {}

 private:
  static std::string one_line(const std::string& message) {
    std::string out;
    out.reserve(message.size());
    for (unsigned char c : message) {
      if (c < 0x20 || c == 0x7f) {
        static const char kHex[] = "0123456789abcdef";
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
    return out;
  }
};

struct OpenOptions {
  bool use_index_file = true;  // reuse and write DUMP.jvmprof-index
  bool progress = false;       // phase and percent on stderr, at most once a second
  // Called while a new index is built (not when one is reused), on the opening thread: the phase
  // ("reading records", "dominators", ...) and its percentage, whenever either changes; each
  // phase ends with 100. Independent of `progress` (stderr).
  std::function<void(const std::string& phase, unsigned percent)> on_progress = nullptr;
  // Where the index file goes: "" beside the dump (DUMP.jvmprof-index), else
  // DIR/NAME.jvmprof-index (NAME the dump's file name). DIR must exist.
  std::string index_dir = {};
  // Lines for the user, before a new index is built: where it goes and how big it will be, and
  // which fallback takes it when the file system there lacks room. Null: on stderr if
  // `progress`, else nowhere.
  std::function<void(const std::string&)> on_notice = nullptr;
};

struct DumpSummary {
  std::string format;  // "JAVA PROFILE 1.0.2"
  uint32_t id_size = 0;
  uint64_t timestamp_ms = 0;
  uint64_t file_bytes = 0;
  bool gzip = false;
  bool index_reused = false;
  // Converted from a text profile's HEAP DUMP (format=a): references and sizes only, no
  // primitive values (no field values but references, no string contents).
  bool text_dump = false;
  uint64_t objects = 0;  // instances + arrays + class objects
  uint64_t instances = 0, object_arrays = 0, primitive_arrays = 0, classes = 0;
  uint64_t gc_roots = 0;  // root records that name a dumped object
  uint64_t shallow_bytes = 0;
  uint64_t reachable_objects = 0, reachable_bytes = 0;  // strongly or weakly reachable
  uint64_t weakly_reachable_objects = 0;                // only through weak/soft/phantom refs
  uint64_t unreachable_objects = 0, unreachable_bytes = 0;
  // Damage the indexer met and worked around: references to objects the dump does not hold
  // (left out of the graph), root records naming none, and instances and arrays of classes the
  // dump never defined (counted under a class named "<unknown class 0x...>"); each with the byte
  // offset of the first offending object record (kNoOffset: none).
  static constexpr uint64_t kNoOffset = ~uint64_t{0};
  uint64_t dangling_references = 0, unresolved_roots = 0;
  uint64_t unknown_class_objects = 0, unknown_classes = 0;
  uint64_t first_dangling_offset = kNoOffset, first_unknown_class_offset = kNoOffset;
  // One line when the damage is beyond what intact dumps show ("" otherwise): more dangling
  // references than kDanglingReferencesTolerated, or any object of an undefined class.
  std::string damage_warning;
  // Intact jcmd dumps refer to class-data-sharing objects the dumper leaves out: 1222 on JDK 25
  // (docs/heap-analysis.md, "Damage"); the bound leaves room for a larger archive.
  static constexpr uint64_t kDanglingReferencesTolerated = 2000;
  // G1 filler arrays (JDK 19 and later) the heap dumper wrote as int[]: unreachable int[]s that
  // nothing refers to, of an even length, counted in the histogram as the row
  // "int[] (unreachable, G1 filler layout)", not as int[] (docs/heap-analysis.md).
  uint64_t filler_objects = 0, filler_bytes = 0;
};

struct ClassStats {
  std::string name;
  uint64_t instances = 0;
  uint64_t shallow_bytes = 0;
  // Retained size of the class: the sum over its instances that have no instance of the same
  // class above them in the dominator tree.
  uint64_t retained_bytes = 0;
};

struct ObjectInfo {
  uint64_t id = 0;
  std::string class_name;
  uint64_t shallow_bytes = 0;
  uint64_t retained_bytes = 0;
};

struct BigObject {
  ObjectInfo object;
  uint64_t retained_objects = 0;
  std::vector<ClassStats> retained_by_class;  // the retained set by class, biggest first
  // Grouped lists only: the chain of single-child dominators below `object` (each the only
  // object its predecessor dominates, so each retains the same bytes less the shallow sizes
  // above it), top down, at most kChainShown of them; chain_length counts them all.
  static constexpr size_t kChainShown = 16;
  std::vector<ObjectInfo> chain;
  uint64_t chain_length = 0;
};

// One step of a path from a GC root: `via` is how the previous object refers to this one
// ("field name", "[index]", "static name"); for the first step it is the root kind.
struct PathStep {
  ObjectInfo object;
  std::string via;
};
using RootPath = std::vector<PathStep>;

struct DuplicateString {
  std::string value;  // UTF-8, cut at 200 bytes
  uint64_t count = 0;
  uint64_t wasted_bytes = 0;                              // shallow bytes of the extra copies
  std::vector<std::pair<std::string, uint64_t>> holders;  // referrer class, references
  uint64_t example_id = 0;                                // one of the copies
};

struct StringReport {
  // Every String in the dump is counted, as jcmd's histogram counts them: `unreachable_strings`
  // of them are garbage the dump still held (a dump taken without a full GC, or HPROF's).
  uint64_t unreachable_strings = 0;
  uint64_t strings = 0, distinct_values = 0, duplicated_strings = 0, wasted_bytes = 0;
  std::vector<DuplicateString> top;
};

struct Suspect {
  enum class Kind { kObject, kClass } kind = Kind::kObject;
  // kObject: the suspect object, the top of the chain of single-child dominators above the
  // accumulation point (the HashMap above its table); kClass: name and retained bytes.
  ObjectInfo object;
  uint64_t instances = 0;  // kClass: instances of the class
  // The bytes this suspect alone accounts for (kClass: its instances' retained bytes outside
  // every object suspect), and their share of the reachable heap; suspects are ranked by it.
  uint64_t distinct_bytes = 0;
  double heap_share = 0;
  ObjectInfo accumulation_point;    // where the retained bytes pile up (kClass: the biggest)
  std::vector<ClassStats> content;  // the accumulation point's retained set by class
  RootPath path;                    // shortest path from a GC root to the accumulation point
  // Who holds it, first of all: the object referring to `object` (kClass: to the biggest
  // instance) on that path and how, e.g. "static RESULT_CACHE of class LeakApp",
  // "field cache of org.h2.Foo 0x1234", "GC root (system class)".
  std::optional<ObjectInfo> holder;  // none when a GC root refers to it
  std::string holder_via;            // "static RESULT_CACHE", "cache", "[3]"; a root: its kind
  std::string held_by;               // the phrase above
  // Classes whose instances would have been suspects of their own but are, for the most part,
  // this suspect's memory: merged here, with their instances and shallow bytes inside it.
  std::vector<ClassStats> merged_classes;
};

struct ClassDiff {
  std::string name;
  int64_t instances_before = 0, instances_after = 0;
  int64_t shallow_before = 0, shallow_after = 0;
  int64_t retained_before = 0, retained_after = 0;
};

// One slot of an object: an instance field, an array element or a static field. Values are
// rendered as text (primitives in Java notation); a reference names its target's id, and its
// class when the target is in the dump.
struct SlotValue {
  std::string name;         // field name, "[3]", static name
  std::string type;         // Java type: "int", "boolean", "Object" for references
  std::string declared_by;  // instance fields: the declaring class; else empty
  std::string value;        // "42", "true", "'a'", "null", "0x7f01..."
  bool reference = false;
  uint64_t target = 0;                    // referenced id (0: null)
  std::optional<ObjectInfo> target_info;  // the referenced object, if in the dump
};

struct ObjectDetail {
  enum class Kind { kInstance, kObjectArray, kPrimitiveArray, kClass } kind = Kind::kInstance;
  ObjectInfo object;
  uint64_t class_id = 0;   // the class object of its class (0 for a made-up array class)
  bool reachable = false;  // strongly or weakly reachable from a GC root
  std::optional<ObjectInfo> dominator;  // immediate dominator (none: roots as a whole)
  std::vector<std::string> gc_roots;    // root kinds naming this object
  // Instances: every field, own class first then superclasses. Arrays: elements
  // [element_offset, element_offset + elements.size()) of `length`.
  std::vector<SlotValue> fields;
  uint64_t length = 0;
  uint64_t element_offset = 0;
  std::vector<SlotValue> elements;
  // Class objects: the class's name, superclass, loader, instance size, static fields.
  std::string class_name;
  uint64_t super_id = 0, loader_id = 0;
  uint32_t instance_size = 0;
  std::vector<SlotValue> statics;
};

// An object that refers to another, and how (field name, "[3]", "static NAME").
struct Referrer {
  ObjectInfo object;
  std::string via;
  bool weak = false;  // the reference is a weak/soft/phantom referent
};

// Objects immediately dominated by one object (or by the GC roots as a whole), biggest
// retained first.
struct DominatedPage {
  uint64_t total = 0;                // all of them
  std::vector<ObjectInfo> children;  // [offset, offset + limit) of them
};

struct ReferrerPage {
  uint64_t total = 0;               // all referrers (strong and weak)
  std::vector<Referrer> referrers;  // [offset, offset + limit) of them
};

class HeapDump {
 public:
  // Throws Error for unreadable or malformed dumps.
  static std::unique_ptr<HeapDump> open(const std::string& path, const OpenOptions& options = {});
  ~HeapDump();
  HeapDump(const HeapDump&) = delete;
  HeapDump& operator=(const HeapDump&) = delete;

  DumpSummary summary() const;
  // Every class with at least one instance, by shallow bytes, biggest first.
  std::vector<ClassStats> class_histogram() const;
  // The objects with the largest retained sizes, biggest first. `group_chains`: an object that
  // is the only one its immediate dominator dominates is not an entry of its own but part of
  // that dominator's chain (BigObject::chain): one entry per chain, headed by its top.
  std::vector<BigObject> biggest_objects(size_t count, size_t classes_per_object,
                                         bool group_chains = false) const;
  std::optional<ObjectInfo> object(uint64_t id) const;
  // Instances of the class with this Java name (all classes of that name), biggest retained
  // first, at most `limit`.
  std::vector<ObjectInfo> instances_of(const std::string& class_name, size_t limit) const;
  // The immediate dominator of an object: nullopt if unreachable or dominated by the GC roots
  // as a whole (no single object dominates it).
  std::optional<ObjectInfo> immediate_dominator(uint64_t id) const;
  // Going down the dominator tree: the objects `id` immediately dominates, biggest retained first
  // (ties in dump order), [offset, offset + limit). Their retained sizes plus `id`'s shallow size
  // make `id`'s retained size. The children lists are built on first use (8 bytes per object).
  // Throws Error if no such object.
  DominatedPage dominated(uint64_t id, uint64_t offset, uint64_t limit) const;
  // The top of the tree: objects dominated by the GC roots as a whole (no single object).
  DominatedPage dominator_roots(uint64_t offset, uint64_t limit) const;
  // Shortest paths from GC roots over strong references, one per distinct last referrer,
  // shortest first. Empty if the object is unreachable; throws Error if no such object.
  std::vector<RootPath> paths_to(uint64_t id, size_t max_paths) const;
  StringReport duplicate_strings(size_t top, size_t holders_per_value) const;
  // Objects and classes retaining at least `threshold` (0..1) of the reachable heap.
  std::vector<Suspect> suspects(double threshold) const;
  // Everything about one object: fields with their values, array elements
  // [element_offset, element_offset + element_limit), statics of a class object.
  // nullopt if no such object.
  std::optional<ObjectDetail> object_detail(uint64_t id, uint64_t element_offset = 0,
                                            uint64_t element_limit = 100) const;
  // The objects that refer to `id` (a reverse index built on first use), in dump order,
  // [offset, offset + limit). Throws Error if no such object.
  ReferrerPage referrers(uint64_t id, uint64_t offset, uint64_t limit) const;

  struct Impl;

 private:
  explicit HeapDump(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Per-class growth from `before` to `after`, classes matched by name, largest change first.
std::vector<ClassDiff> diff_classes(const HeapDump& before, const HeapDump& after);

}  // namespace analysis
