// SPDX-License-Identifier: Apache-2.0
#include "binary_profile.h"

#include <cstdio>
#include <unordered_map>

#include "hprof_format.h"

namespace profiles {
namespace {

std::string_view primitive_array_name(uint8_t kind) {
  switch (kind) {
    case 4:
      return "boolean[]";
    case 5:
      return "char[]";
    case 6:
      return "float[]";
    case 7:
      return "double[]";
    case 8:
      return "byte[]";
    case 9:
      return "short[]";
    case 10:
      return "int[]";
    case 11:
      return "long[]";
    default:
      return "<unknown array>";
  }
}

// Names are kept only while they may still be used by a frame, class or thread; the budget stops
// a stream of endless UTF8 records from growing the front end without bound.
constexpr size_t kStringBudget = size_t{256} << 20;

class ProfileVisitor : public hprof::Visitor {
 public:
  ProfileVisitor(JavaProfile& p, const std::string& source, const PeriodHandler& on_period)
      : p_(p), source_(source), on_period_(on_period) {}

  void on_utf8(const hprof::Utf8& r) override {
    string_bytes_ += r.text.size();
    if (string_bytes_ > kStringBudget)
      throw ProfileError(source_ + ": more than 256 MiB of UTF8 names");
    if (drops_note(r) || settings_note(r) || sampler_note(r) || period_note(r) || identity_note(r))
      return;
    strings_[r.id] = std::string(r.text);
  }
  // HPROF's DROPPED note under net= (format=b): a UTF8 record with the name id whose bits are all
  // set, which no other record names; the text is format=a's DROPPED line (running totals).
  bool drops_note(const hprof::Utf8& r) {
    if (r.id != ~uint64_t{0} && r.id != 0xFFFFFFFFu) return false;
    unsigned long long events = 0, bytes = 0;
    const std::string text(r.text);
    if (std::sscanf(text.c_str(), "DROPPED: %llu events (%llu bytes)", &events, &bytes) != 2)
      return false;
    p_.dropped_events = events;
    p_.dropped_bytes = bytes;
    return true;
  }
  // The SETTINGS note (format=b): the name id one below the DROPPED note's, the text format=a's
  // SETTINGS line.
  bool settings_note(const hprof::Utf8& r) {
    if (r.id != ~uint64_t{1} && r.id != 0xFFFFFFFEu) return false;
    std::string_view text(r.text);
    if (!text.starts_with("SETTINGS: ")) return false;
    return parse_agent_settings(text.substr(10), p_);
  }
  // HPROF's CPU SAMPLER note (docs/hprof-binary-format.md): the CPU-time sampler's counters.
  bool sampler_note(const hprof::Utf8& r) {
    if (r.id != hprof::kSamplerNoteId && r.id != 0xFFFFFFFDu) return false;  // 8- or 4-byte ids
    unsigned long long v[5] = {};
    const std::string text(r.text);
    if (std::sscanf(text.c_str(),
                    "CPU SAMPLER: signals=%llu taken=%llu recovered=%llu unattributable=%llu "
                    "lost=%llu",
                    &v[0], &v[1], &v[2], &v[3], &v[4]) != 5) {
      return false;
    }
    p_.cpu_sampler = {{"signals", v[0]},
                      {"taken", v[1]},
                      {"recovered", v[2]},
                      {"unattributable", v[3]},
                      {"lost", v[4]}};
    return true;
  }
  // HPROF's PERIOD note (period=): format=a's PERIOD block as the text of a UTF8 record with the
  // name id three below the DROPPED note's.
  bool period_note(const hprof::Utf8& r) {
    if (r.id != ~uint64_t{3} && r.id != 0xFFFFFFFCu) return false;
    take_period(r.text, p_, on_period_, source_);
    return true;
  }
  // HPROF's IDENTITY note (net=): format=a's IDENTITY line, name id four below the DROPPED note's.
  bool identity_note(const hprof::Utf8& r) {
    if (r.id != ~uint64_t{4} && r.id != 0xFFFFFFFBu) return false;
    std::string_view text(r.text);
    return text.starts_with("IDENTITY: ") && parse_agent_identity(text.substr(10), p_);
  }
  void on_load_class(const hprof::LoadClass& r) override {
    class_names_[r.class_serial] = name(r.name_id);
  }
  void on_stack_frame(const hprof::StackFrame& r) override {
    Frame f;
    auto c = class_names_.find(r.class_serial);
    f.method = (c == class_names_.end() ? std::string("<unknown class>") : c->second) + "." +
               name(r.method_name_id);
    if (r.source_file_id != 0) f.source = name(r.source_file_id);
    f.line = r.line;
    if (frames_.size() >= (size_t{1} << 24)) throw ProfileError(source_ + ": more than 16M frames");
    frames_[r.frame_id] = std::move(f);
  }
  void on_stack_trace(const hprof::StackTrace& r) override {
    Trace t;
    t.serial = r.trace_serial;
    t.thread = r.thread_serial;
    for (hprof::Id id : r.frame_ids) {
      auto f = frames_.find(id);
      t.frames.push_back(f == frames_.end() ? Frame{"<unknown frame>", "", -1} : f->second);
    }
    if (p_.traces.size() >= (size_t{1} << 22) && !p_.traces.count(t.serial))
      throw ProfileError(source_ + ": more than 4M traces");
    p_.traces[t.serial] = std::move(t);
  }
  void on_alloc_sites(const hprof::AllocSites& r) override {
    std::vector<Site> sites;
    sites.reserve(r.sites.size());
    for (const auto& s : r.sites) {
      Site site;
      if (s.kind == 0 || s.kind == 2) {
        auto c = class_names_.find(s.class_serial);
        site.class_name = c == class_names_.end() ? "<unknown class>" : c->second;
        // An object array's site names its element class; the text report names the array class.
        if (s.kind == 2 && !site.class_name.ends_with("[]")) site.class_name += "[]";
      } else {
        site.class_name = std::string(primitive_array_name(s.kind));
      }
      site.trace = s.trace_serial;
      site.live_bytes = s.live_bytes;
      site.live_objects = s.live_instances;
      site.alloc_bytes = s.allocated_bytes;
      site.alloc_objects = s.allocated_instances;
      sites.push_back(std::move(site));
    }
    p_.sites = std::move(sites);
    p_.count_section("SITES");
  }
  void on_heap_summary(const hprof::HeapSummary& r) override {
    p_.heap_summary = std::vector<uint64_t>{r.live_bytes, r.live_instances, r.allocated_bytes,
                                            r.allocated_instances};
    p_.count_section("HEAP SUMMARY");
  }
  void on_start_thread(const hprof::StartThread& r) override {
    ThreadInfo& t = p_.threads[r.thread_serial];
    t.serial = r.thread_serial;
    t.name = name(r.name_id);
    t.group = name(r.group_name_id);
    t.start_read_ms = wall_clock_ms();
  }
  void on_end_thread(const hprof::EndThread& r) override {
    ThreadInfo& t = p_.threads[r.thread_serial];
    t.serial = r.thread_serial;
    t.ended = true;
    t.end_read_ms = wall_clock_ms();
  }
  void on_cpu_samples(const hprof::CpuSamples& r) override {
    CostSection s;
    s.total = r.total;
    for (const auto& t : r.traces) {
      CostRow row;
      row.trace = t.trace_serial;
      row.count = t.samples;
      row.self_percent = r.total == 0 ? 0 : 100.0 * t.samples / r.total;
      auto trace = p_.traces.find(t.trace_serial);
      if (trace != p_.traces.end() && !trace->second.frames.empty())
        row.name = trace->second.frames.front().method;
      s.rows.push_back(std::move(row));
    }
    p_.cpu_samples = std::move(s);
    p_.count_section("CPU SAMPLES");
  }
  void on_record(const hprof::RecordInfo& r) override {
    if (r.tag == hprof::Tag::kHeapDump || r.tag == hprof::Tag::kHeapDumpEnd) {
      ++p_.heap_dumps;
      p_.count_section("HEAP DUMP");
    }
  }

 private:
  std::string name(hprof::Id id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string() : it->second;
  }

  JavaProfile& p_;
  const std::string& source_;
  const PeriodHandler& on_period_;
  std::unordered_map<hprof::Id, std::string> strings_;
  std::unordered_map<uint32_t, std::string> class_names_;
  std::unordered_map<hprof::Id, Frame> frames_;
  size_t string_bytes_ = 0;
};

}  // namespace

struct BinaryProfileParser::Impl {
  std::string source;
  size_t max_record;
  ProfileVisitor visitor;
  hprof::StreamParser parser;
  Impl(JavaProfile& p, std::string s, size_t max, const PeriodHandler& on_period)
      : source(std::move(s)),
        max_record(max),
        visitor(p, source, on_period),
        parser(visitor, source) {}
};

BinaryProfileParser::BinaryProfileParser(JavaProfile& profile, std::string source,
                                         size_t max_record, const PeriodHandler& on_period)
    : impl_(std::make_unique<Impl>(profile, std::move(source), max_record, on_period)) {}
BinaryProfileParser::~BinaryProfileParser() = default;

void BinaryProfileParser::feed(std::string_view bytes) {
  try {
    impl_->parser.feed(bytes.data(), bytes.size());
  } catch (const hprof::FormatError& e) {
    throw ProfileError(e.what());
  }
  if (impl_->parser.buffered() > impl_->max_record)
    throw ProfileError(impl_->source + ": a record larger than " +
                       std::to_string(impl_->max_record >> 20) + " MiB at offset " +
                       std::to_string(impl_->parser.offset()));
}

void BinaryProfileParser::finish() {
  try {
    impl_->parser.finish();
  } catch (const hprof::FormatError& e) {
    throw ProfileError(e.what());
  }
}

size_t BinaryProfileParser::buffered() const {
  return impl_->parser.buffered();
}

}  // namespace profiles
