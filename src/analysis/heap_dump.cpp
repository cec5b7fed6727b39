// SPDX-License-Identifier: Apache-2.0
// Opening a dump (reusing or building its index) and the class and object views.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "byte_reader.h"
#include "heap_dump_impl.h"
#include "id_table.h"
#include "progress.h"
#include "text_dump.h"

namespace analysis {

using detail::kNone;

HeapDump::HeapDump(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HeapDump::~HeapDump() = default;

std::unique_ptr<HeapDump> HeapDump::open(const std::string& given, const OpenOptions& options) {
  struct stat st;
  if (::stat(given.c_str(), &st) != 0) throw Error(given + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(given + ": not a regular file");
  // A text profile's newest HEAP DUMP is converted to a binary dump first (text_dump.cpp).
  const bool text = detail::is_text_profile(given);
  const std::string path = text ? detail::convert_text_dump(given, options.use_index_file) : given;
  if (text && ::stat(path.c_str(), &st) != 0) throw Error(path + ": " + std::strerror(errno));
  auto impl = std::make_unique<Impl>();
  impl->text_dump = text;
  const bool scratch = text && path != given + ".jvmprof-heap.hprof";
  const bool use_index_file = options.use_index_file && !scratch;
  if (scratch) {
    // A scratch conversion: mapped now, then removed (the mapping keeps it while open).
    impl->path = path;
    try {
      impl->dump();
    } catch (...) {
      ::unlink(path.c_str());
      throw;
    }
    ::unlink(path.c_str());
  }
  impl->path = path;
  impl->file_bytes = static_cast<uint64_t>(st.st_size);
  impl->gzip = detail::MappedFile::is_gzip(path);
  const detail::DumpIdentity identity{static_cast<uint64_t>(st.st_size),
                                      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
  std::string index_path = path + ".jvmprof-index";
  if (!options.index_dir.empty()) {
    struct stat dir;
    if (::stat(options.index_dir.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))
      throw Error(options.index_dir + ": not a directory (for the index file)");
    const size_t slash = path.rfind('/');
    index_path = options.index_dir + "/" +
                 (slash == std::string::npos ? path : path.substr(slash + 1)) + ".jvmprof-index";
  }
  detail::NoticeFn notice = options.on_notice;
  if (!notice && options.progress)
    notice = [](const std::string& line) { std::fprintf(stderr, "jvmprof: %s\n", line.c_str()); };
  if (use_index_file) {
    impl->index = detail::load_index(index_path, identity);
    impl->index_reused = impl->index != nullptr;
    if (impl->index) {
      // Its sections are checked on first use under the lock of the other lazily built state; one
      // that fails has the index rebuilt from the dump (and saved again), as at open.
      detail::LazySections& lazy = *impl->index->lazy;
      lazy.mu = &impl->lazy_mu;
      lazy.rebuild = [dump = impl.get(), index_path, identity, shown = options.progress, notice] {
        detail::Progress progress(shown);
        detail::ProgressFn report = [&](const char* phase, uint64_t done, uint64_t total) {
          progress.update(phase, done, total);
        };
        auto fresh = std::make_unique<detail::HeapIndex>(
            detail::build_index(dump->dump(), report, index_path, true, identity, notice));
        progress.finish();
        return fresh;
      };
    }
  }
  if (!impl->index) {
    detail::Progress progress(options.progress, options.on_progress);
    detail::ProgressFn report = [&](const char* phase, uint64_t done, uint64_t total) {
      progress.update(phase, done, total);
    };
    if (impl->gzip) progress.update("decompressing", 0, 1);
    std::span<const uint8_t> bytes = impl->dump();
    try {
      impl->index = std::make_unique<detail::HeapIndex>(
          detail::build_index(bytes, report, index_path, use_index_file, identity, notice));
      progress.finish();
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  }
  return std::unique_ptr<HeapDump>(new HeapDump(std::move(impl)));
}

std::span<const uint8_t> HeapDump::Impl::dump() const {
  // Queries run concurrently (jvmprof serve's request threads): mapped once; a failure throws
  // and leaves it to the next call.
  std::call_once(dump_once, [this] { dump_file = detail::MappedFile::open(path, gzip); });
  return dump_file.bytes();
}

uint64_t HeapDump::Impl::id_of(uint32_t node) const {
  std::span<const uint8_t> file = dump();
  const uint64_t at = ix().node_offset()[node];
  const uint32_t ids = ix().header.id_size;
  if (at + 1 + ids > file.size())
    throw Error(path + ": index does not match the dump; delete " + path + ".jvmprof-index");
  return detail::load_be(file.data() + at + 1, ids);
}

// A class object is named for the class it is ("class LeakApp", as MAT and VisualVM show it),
// not for its own class, java.lang.Class: a leak held by a static field then names its class.
std::string HeapDump::Impl::class_name(uint32_t node) const {
  const uint32_t k = ix().node_class()[node];
  if (k == ix().class_class) {
    const uint32_t named = class_of_object(node);
    if (named != kNone) return "class " + ix().classes[named].name;
  }
  return ix().classes[k].name;
}

uint32_t HeapDump::Impl::class_of_object(uint32_t node) const {
  std::lock_guard lock(lazy_mu);
  if (!class_objects_) {
    auto table = std::make_unique<std::vector<std::pair<uint32_t, uint32_t>>>();
    for (uint32_t k = 0; k < ix().classes.size(); ++k)
      if (ix().classes[k].object != kNone) table->emplace_back(ix().classes[k].object, k);
    std::sort(table->begin(), table->end());
    class_objects_ = std::move(table);
  }
  auto it = std::lower_bound(class_objects_->begin(), class_objects_->end(),
                             std::pair<uint32_t, uint32_t>{node, 0});
  return it != class_objects_->end() && it->first == node ? it->second : kNone;
}

ObjectInfo HeapDump::Impl::info(uint32_t node) const {
  return {id_of(node), class_name(node), ix().shallow(node), ix().retained()[node]};
}

// Through the index's id table: a probe or two, each reading a candidate's id from the dump.
uint32_t HeapDump::Impl::find_node(uint64_t id) const {
  std::span<const uint8_t> file = dump();
  const detail::HeapIndex& x = ix();
  const uint32_t ids = x.header.id_size;
  // Every slot is kNone or a node (checked with the section, on its first use).
  const auto offsets = x.node_offset();
  return detail::find_in_id_table(x.id_table(), id, [&](uint32_t v) -> uint64_t {
    const uint64_t at = offsets[v];
    // An offset past the end cannot be a match: the probe goes on.
    if (at + 1 + ids > file.size()) return ~id;
    return detail::load_be(file.data() + at + 1, ids);
  });
}

const HeapDump::Impl::Tree& HeapDump::Impl::tree() const {
  std::lock_guard lock(lazy_mu);
  if (tree_) return *tree_;
  const uint32_t n = ix().node_count;
  auto t = std::make_unique<Tree>(detail::dominator_children(ix()));
  // Biggest first, so a page of children is a slice (the browser's "dominated" view).
  const auto retained = ix().retained();
  for (uint32_t v = 0; v <= n; ++v)
    std::sort(t->child.begin() + t->begin[v], t->child.begin() + t->begin[v + 1],
              [&](uint32_t a, uint32_t b) {
                return retained[a] != retained[b] ? retained[a] > retained[b] : a < b;
              });
  tree_ = std::move(t);
  return *tree_;
}

std::string HeapDump::Impl::utf8_name(uint64_t id) const {
  std::span<const uint8_t> file = dump();
  const uint32_t ids = ix().header.id_size;
  std::lock_guard lock(lazy_mu);
  if (!utf8_) {
    // Top-level records only: heap dump segments are skipped by their lengths.
    auto table = std::make_unique<std::vector<std::pair<uint64_t, uint64_t>>>();
    uint64_t pos = 0;
    while (pos < file.size() && file[pos] != 0) ++pos;
    pos += 1 + 4 + 8;
    while (pos + 9 <= file.size()) {
      const uint8_t tag = file[pos];
      const uint32_t length = detail::load_u4(file.data() + pos + 5);
      const uint64_t body = pos + 9;
      if (length > file.size() - body) break;
      if (tag == 0x01 && length >= ids)
        table->emplace_back(detail::load_be(file.data() + body, ids), pos);
      pos = body + length;
    }
    std::sort(table->begin(), table->end());
    utf8_ = std::move(table);
  }
  auto it = std::lower_bound(utf8_->begin(), utf8_->end(), std::pair<uint64_t, uint64_t>{id, 0});
  if (it == utf8_->end() || it->first != id) return "?";
  const uint64_t pos = it->second;
  const uint32_t length = detail::load_u4(file.data() + pos + 5);
  return std::string(reinterpret_cast<const char*>(file.data() + pos + 9 + ids), length - ids);
}

uint64_t HeapDump::Impl::reachable_bytes() const {
  uint64_t total = 0;
  const auto idom = ix().idom();
  const auto retained = ix().retained();
  for (uint32_t v = 0; v < ix().node_count; ++v)
    if (idom[v] == ix().node_count) total += retained[v];
  return total;
}

// From the index's summary (computed when it was built, saved with it): no walk here.
const std::vector<ClassStats>& HeapDump::Impl::class_stats() const {
  std::lock_guard lock(lazy_mu);
  if (histogram_) return *histogram_;
  const auto& classes = ix().classes;
  const auto& totals = ix().summary.per_class;
  auto stats = std::make_unique<std::vector<ClassStats>>(classes.size());
  for (size_t k = 0; k < classes.size(); ++k)
    (*stats)[k] = {classes[k].name, totals[k].instances, totals[k].shallow_bytes,
                   totals[k].retained_bytes};
  histogram_ = std::move(stats);
  return *histogram_;
}

std::vector<ClassStats> HeapDump::Impl::retained_by_class(uint32_t node, size_t limit,
                                                          uint64_t* objects) const {
  const Tree& t = tree();
  std::unordered_map<uint32_t, ClassStats> by_class;
  std::vector<uint32_t> stack{node};
  uint64_t count = 0;
  while (!stack.empty()) {
    uint32_t v = stack.back();
    stack.pop_back();
    ++count;
    ClassStats& s = by_class[ix().node_class()[v]];
    ++s.instances;
    s.shallow_bytes += ix().shallow(v);
    for (uint32_t i = t.begin[v]; i < t.begin[v + 1]; ++i) stack.push_back(t.child[i]);
  }
  if (objects) *objects = count;
  std::vector<ClassStats> out;
  for (auto& [k, s] : by_class) {
    s.name = ix().classes[k].name;
    s.retained_bytes = s.shallow_bytes;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const ClassStats& a, const ClassStats& b) {
    return a.shallow_bytes != b.shallow_bytes ? a.shallow_bytes > b.shallow_bytes : a.name < b.name;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

namespace {

std::string damage_warning(const DumpSummary& s) {
  std::string out;
  char buf[200];
  if (s.dangling_references > DumpSummary::kDanglingReferencesTolerated) {
    std::snprintf(buf, sizeof buf,
                  "%llu references to objects not in the dump (intact jcmd dumps have at most "
                  "%llu; the first is in the object record at byte %llu)",
                  static_cast<unsigned long long>(s.dangling_references),
                  static_cast<unsigned long long>(DumpSummary::kDanglingReferencesTolerated),
                  static_cast<unsigned long long>(s.first_dangling_offset));
    out = buf;
  }
  if (s.unknown_class_objects > 0) {
    std::snprintf(buf, sizeof buf,
                  "%llu objects of %llu classes the dump never defined (the first is the object "
                  "record at byte %llu)",
                  static_cast<unsigned long long>(s.unknown_class_objects),
                  static_cast<unsigned long long>(s.unknown_classes),
                  static_cast<unsigned long long>(s.first_unknown_class_offset));
    out += (out.empty() ? "" : " and ") + std::string(buf);
  }
  if (!out.empty()) out = "damaged dump? " + out + ": sizes and paths near them may be wrong";
  return out;
}

}  // namespace

DumpSummary HeapDump::summary() const {
  const auto& ix = impl_->ix();
  DumpSummary s;
  s.format = ix.header.format;
  s.id_size = ix.header.id_size;
  s.timestamp_ms = ix.header.timestamp_ms;
  s.file_bytes = impl_->file_bytes;
  s.gzip = impl_->gzip;
  s.text_dump = impl_->text_dump;
  // The counts come from the index's summary, computed when it was built (index_summary.cpp):
  // a reopened dump answers without reading its 20 bytes per object.
  const detail::IndexSummary& saved = ix.summary;
  s.objects = ix.node_count;
  s.instances = saved.instances;
  s.object_arrays = saved.object_arrays;
  s.primitive_arrays = saved.primitive_arrays;
  s.classes = saved.classes;
  s.gc_roots = saved.gc_roots;
  s.shallow_bytes = saved.shallow_bytes;
  s.reachable_objects = saved.reachable_objects;
  s.reachable_bytes = saved.reachable_bytes;
  s.unreachable_objects = saved.unreachable_objects;
  s.unreachable_bytes = saved.unreachable_bytes;
  s.weakly_reachable_objects = ix.counts.weakly_reachable;
  const detail::IndexCounts& c = ix.counts;
  s.dangling_references = c.dangling_refs;
  s.unresolved_roots = c.unresolved_roots;
  s.unknown_class_objects = c.unknown_class_objects;
  s.unknown_classes = c.unknown_classes;
  s.first_dangling_offset = c.first_dangling;
  s.first_unknown_class_offset = c.first_unknown_class;
  s.filler_objects = c.filler_objects;
  s.filler_bytes = c.filler_bytes;
  s.damage_warning = damage_warning(s);
  // Last: a section that failed its check above had the index rebuilt.
  s.index_reused = impl_->index_reused && !ix.rebuilt();
  return s;
}

std::vector<ClassStats> HeapDump::class_histogram() const {
  std::vector<ClassStats> out;
  for (const ClassStats& s : impl_->class_stats())
    if (s.instances > 0) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const ClassStats& a, const ClassStats& b) {
    return a.shallow_bytes != b.shallow_bytes ? a.shallow_bytes > b.shallow_bytes : a.name < b.name;
  });
  return out;
}

std::vector<BigObject> HeapDump::biggest_objects(size_t count, size_t classes_per_object,
                                                 bool group_chains) const {
  const auto& ix = impl_->ix();
  const Impl::Tree* tree = group_chains ? &impl_->tree() : nullptr;
  auto single_child = [&](uint32_t v) { return tree->begin[v + 1] - tree->begin[v] == 1; };
  using Entry = std::pair<uint64_t, uint32_t>;  // retained, node; min-heap of the best so far
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> best;
  const auto idom = ix.idom();
  const auto retained = ix.retained();
  for (uint32_t v = 0; v < ix.node_count && count > 0; ++v) {
    if (idom[v] == kNone) continue;
    if (tree && idom[v] != ix.node_count && single_child(idom[v])) continue;  // in a chain
    Entry e{retained[v], ~v};  // ~v: among equals, the earlier object wins
    if (best.size() < count)
      best.push(e);
    else if (best.top() < e)
      best.pop(), best.push(e);
  }
  std::vector<BigObject> out;
  while (!best.empty()) {
    uint32_t v = ~best.top().second;
    best.pop();
    BigObject b;
    b.object = impl_->info(v);
    b.retained_by_class = impl_->retained_by_class(v, classes_per_object, &b.retained_objects);
    if (tree)
      for (uint32_t u = v; single_child(u); ++b.chain_length) {
        u = tree->child[tree->begin[u]];
        if (b.chain.size() < BigObject::kChainShown) b.chain.push_back(impl_->info(u));
      }
    out.push_back(std::move(b));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<ObjectInfo> HeapDump::object(uint64_t id) const {
  uint32_t v = impl_->find_node(id);
  if (v == kNone) return std::nullopt;
  return impl_->info(v);
}

std::vector<ObjectInfo> HeapDump::instances_of(const std::string& class_name, size_t limit) const {
  const auto& ix = impl_->ix();
  std::vector<bool> wanted(ix.classes.size());
  for (size_t k = 0; k < ix.classes.size(); ++k) wanted[k] = ix.classes[k].name == class_name;
  std::vector<uint32_t> nodes;
  const auto node_class = ix.node_class();
  for (uint32_t v = 0; v < ix.node_count; ++v)
    if (wanted[node_class[v]]) nodes.push_back(v);
  const auto retained = ix.retained();
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](uint32_t a, uint32_t b) { return retained[a] > retained[b]; });
  if (nodes.size() > limit) nodes.resize(limit);
  std::vector<ObjectInfo> out;
  for (uint32_t v : nodes) out.push_back(impl_->info(v));
  return out;
}

std::optional<ObjectInfo> HeapDump::immediate_dominator(uint64_t id) const {
  const auto& ix = impl_->ix();
  uint32_t v = impl_->find_node(id);
  if (v == kNone || ix.idom()[v] == kNone || ix.idom()[v] == ix.node_count) return std::nullopt;
  return impl_->info(ix.idom()[v]);
}

DominatedPage HeapDump::Impl::children_page(uint32_t node, uint64_t offset, uint64_t limit) const {
  const Tree& t = tree();
  DominatedPage page;
  const uint32_t first = t.begin[node], end = t.begin[node + 1];
  page.total = end - first;
  for (uint64_t i = offset; i < page.total && i - offset < limit; ++i)
    page.children.push_back(info(t.child[first + i]));
  return page;
}

DominatedPage HeapDump::dominated(uint64_t id, uint64_t offset, uint64_t limit) const {
  const uint32_t v = impl_->find_node(id);
  if (v == kNone) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "no object with id 0x%llx in the dump",
                  static_cast<unsigned long long>(id));
    throw Error(buf);
  }
  return impl_->children_page(v, offset, limit);
}

DominatedPage HeapDump::dominator_roots(uint64_t offset, uint64_t limit) const {
  return impl_->children_page(impl_->ix().node_count, offset, limit);
}

std::vector<RootPath> HeapDump::paths_to(uint64_t id, size_t max_paths) const {
  uint32_t v = impl_->find_node(id);
  if (v == kNone) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "no object with id 0x%llx in the dump",
                  static_cast<unsigned long long>(id));
    throw Error(buf);
  }
  return impl_->paths_to(v, max_paths);
}

std::vector<ClassDiff> diff_classes(const HeapDump& before, const HeapDump& after) {
  std::unordered_map<std::string, ClassDiff> by_name;
  for (const ClassStats& s : before.class_histogram()) {
    ClassDiff& d = by_name[s.name];
    d.name = s.name;
    d.instances_before += static_cast<int64_t>(s.instances);
    d.shallow_before += static_cast<int64_t>(s.shallow_bytes);
    d.retained_before += static_cast<int64_t>(s.retained_bytes);
  }
  for (const ClassStats& s : after.class_histogram()) {
    ClassDiff& d = by_name[s.name];
    d.name = s.name;
    d.instances_after += static_cast<int64_t>(s.instances);
    d.shallow_after += static_cast<int64_t>(s.shallow_bytes);
    d.retained_after += static_cast<int64_t>(s.retained_bytes);
  }
  std::vector<ClassDiff> out;
  for (auto& [name, d] : by_name)
    if (d.instances_before != d.instances_after || d.shallow_before != d.shallow_after ||
        d.retained_before != d.retained_after)
      out.push_back(std::move(d));
  auto magnitude = [](const ClassDiff& d) {
    int64_t s = d.shallow_after - d.shallow_before;
    return s < 0 ? -s : s;
  };
  std::sort(out.begin(), out.end(), [&](const ClassDiff& a, const ClassDiff& b) {
    if (magnitude(a) != magnitude(b)) return magnitude(a) > magnitude(b);
    return a.name < b.name;
  });
  return out;
}

}  // namespace analysis
