// SPDX-License-Identifier: Apache-2.0
#include "synthetic_dump.h"

#include <fstream>
#include <map>

namespace analysis_test {

uint64_t SyntheticDump::add_class(const std::string& name, uint64_t super,
                                  std::vector<FieldSpec> fields,
                                  std::vector<std::pair<std::string, uint64_t>> object_statics,
                                  bool root) {
  uint64_t cid = next_id();
  classes_.push_back({cid, name, super, std::move(fields), std::move(object_statics)});
  if (root) roots_.push_back({hprof::SubTag::kRootStickyClass, cid});
  return cid;
}

uint64_t SyntheticDump::add_instance(uint64_t class_id, std::vector<hprof::Value> values) {
  uint64_t oid = next_id();
  objects_.push_back({Object::kInstance, oid, class_id, std::move(values), {}, {}, 0});
  return oid;
}

uint64_t SyntheticDump::add_object_array(uint64_t array_class, std::vector<uint64_t> elements) {
  uint64_t oid = next_id();
  objects_.push_back({Object::kObjArray, oid, array_class, {}, std::move(elements), {}, 0});
  return oid;
}

uint64_t SyntheticDump::add_byte_array(std::vector<uint8_t> bytes) {
  uint64_t oid = next_id();
  objects_.push_back({Object::kBytes, oid, 0, {}, {}, std::move(bytes), 0});
  return oid;
}

uint64_t SyntheticDump::add_int_array(uint32_t length) {
  uint64_t oid = next_id();
  objects_.push_back({Object::kInts, oid, 0, {}, {}, {}, length});
  return oid;
}

std::vector<uint8_t> SyntheticDump::bytes() const {
  hprof::MemorySink sink(true);
  {
    hprof::WriterOptions options;
    options.version = version_;
    options.id_size = id_size_;
    options.timestamp_ms = 1'700'000'000'000;
    options.segment_limit = segment_limit_;
    hprof::BinaryWriter w(sink, options);
    std::map<std::string, uint64_t> names;
    uint64_t name_counter = 1'000'000;
    auto name_id = [&](const std::string& s) {
      auto [it, inserted] = names.try_emplace(s, 0);
      if (inserted) {
        it->second = id_size_ == 8 ? (uint64_t{3} << 40) + name_counter : name_counter;
        ++name_counter;
        w.utf8(it->second, s);
      }
      return it->second;
    };
    uint32_t serial = 0;
    for (const ClassSpec& c : classes_) {
      hprof::LoadClass lc;
      lc.class_serial = ++serial;
      lc.class_id = c.id;
      lc.name_id = name_id(c.name);
      w.load_class(lc);
    }
    std::vector<hprof::ClassDump> dumps;
    for (const ClassSpec& c : classes_) {
      hprof::ClassDump d;
      d.class_id = c.id;
      d.super_id = c.super;
      for (const FieldSpec& f : c.fields) d.fields.push_back({name_id(f.name), f.type});
      for (const auto& [name, value] : c.statics)
        d.statics.push_back({name_id(name), hprof::Value::of_object(value)});
      dumps.push_back(std::move(d));
    }
    // Instance sizes: the dump's own field bytes of the whole chain.
    auto find = [&](uint64_t cid) -> const ClassSpec* {
      for (const ClassSpec& c : classes_)
        if (c.id == cid) return &c;
      return nullptr;
    };
    for (hprof::ClassDump& d : dumps) {
      uint32_t size = 0;
      size_t depth = 0;  // a cyclic chain (a hostile test) stops after every class once
      for (const ClassSpec* c = find(d.class_id); c && depth++ < classes_.size();
           c = find(c->super))
        for (const FieldSpec& f : c->fields) size += hprof::type_size(f.type, id_size_);
      d.instance_size = size;
    }
    hprof::HeapDumpWriter h = w.begin_heap_dump();
    for (const auto& [kind, object] : roots_) {
      hprof::Root r;
      r.kind = kind;
      r.object_id = object;
      h.root(r);
    }
    for (const hprof::ClassDump& d : dumps) h.class_dump(d);
    for (const Object& o : objects_) {
      switch (o.kind) {
        case Object::kInstance: {
          std::vector<uint8_t> data;
          for (const hprof::Value& v : o.values) hprof::append_value(data, v, id_size_);
          h.instance_dump(o.id, 0, o.class_id, data);
          break;
        }
        case Object::kObjArray: {
          std::vector<hprof::Id> ids(o.elements.begin(), o.elements.end());
          h.obj_array_dump(o.id, 0, o.class_id, ids);
          break;
        }
        case Object::kBytes:
          h.prim_array_dump(o.id, 0, hprof::BasicType::kByte, o.bytes.data(),
                            static_cast<uint32_t>(o.bytes.size()));
          break;
        case Object::kInts: {
          std::vector<int32_t> ints(o.length, 7);
          h.prim_array_dump(o.id, 0, hprof::BasicType::kInt, ints.data(), o.length);
          break;
        }
      }
    }
    h.finish();
    w.flush();
  }
  return sink.data();
}

void SyntheticDump::write(const std::string& path) const {
  std::vector<uint8_t> data = bytes();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

}  // namespace analysis_test
