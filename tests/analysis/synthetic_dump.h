// SPDX-License-Identifier: Apache-2.0
// Builds small heap dumps for the analyzer's tests with src/formats' writer: classes with
// instance fields and statics, instances, arrays and roots, described by names and small ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hprof_format.h"

namespace analysis_test {

struct FieldSpec {
  std::string name;
  hprof::BasicType type;
};

class SyntheticDump {
 public:
  SyntheticDump(uint32_t id_size, hprof::Version version, uint64_t segment_limit = 2'000'000'000)
      : id_size_(id_size), version_(version), segment_limit_(segment_limit) {}

  // Ids are small numbers scaled so that 8-byte dumps use ids above 2^32.
  uint64_t id(uint64_t n) const { return id_size_ == 8 ? (uint64_t{1} << 36) + n * 8 : n * 8; }

  // A class (and a sticky-class root for it unless `root` is false).
  uint64_t add_class(const std::string& name, uint64_t super, std::vector<FieldSpec> fields,
                     std::vector<std::pair<std::string, uint64_t>> object_statics = {},
                     bool root = true);
  // Field values in declaration order of the class, then its superclasses; object values are ids.
  uint64_t add_instance(uint64_t class_id, std::vector<hprof::Value> values);
  uint64_t add_object_array(uint64_t array_class, std::vector<uint64_t> elements);
  uint64_t add_byte_array(std::vector<uint8_t> bytes);
  uint64_t add_int_array(uint32_t length);
  void add_root(hprof::SubTag kind, uint64_t object) { roots_.push_back({kind, object}); }

  std::vector<uint8_t> bytes() const;
  void write(const std::string& path) const;

 private:
  struct ClassSpec {
    uint64_t id;
    std::string name;
    uint64_t super;
    std::vector<FieldSpec> fields;
    std::vector<std::pair<std::string, uint64_t>> statics;
  };
  struct Object {
    enum Kind { kInstance, kObjArray, kBytes, kInts } kind;
    uint64_t id, class_id;
    std::vector<hprof::Value> values;
    std::vector<uint64_t> elements;
    std::vector<uint8_t> bytes;
    uint32_t length = 0;
  };
  uint64_t next_id() { return id(++counter_); }

  uint32_t id_size_;
  hprof::Version version_;
  uint64_t segment_limit_;
  uint64_t counter_ = 0;
  std::vector<ClassSpec> classes_;
  std::vector<Object> objects_;
  std::vector<std::pair<hprof::SubTag, uint64_t>> roots_;
};

}  // namespace analysis_test
