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
  uint64_t strings = 0, distinct_values = 0, duplicated_strings = 0, wasted_bytes = 0;
  std::vector<DuplicateString> top;
};

struct Suspect {
  enum class Kind { kObject, kClass } kind = Kind::kObject;
  ObjectInfo object;                // kObject: the object; kClass: name and retained bytes
  uint64_t instances = 0;           // kClass: instances of the class
  double heap_share = 0;            // retained / reachable bytes
  ObjectInfo accumulation_point;    // where the retained bytes pile up (kObject)
  std::vector<ClassStats> content;  // the accumulation point's retained set by class
  RootPath path;                    // shortest path from a GC root to the accumulation point
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
  // The objects with the largest retained sizes, biggest first.
  std::vector<BigObject> biggest_objects(size_t count, size_t classes_per_object) const;
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
