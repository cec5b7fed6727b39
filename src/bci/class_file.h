// SPDX-License-Identifier: Apache-2.0
// In-memory class file: constant pool, fields, methods and attributes (kept as raw bytes so
// unknown attributes pass through and an unmodified class is written back byte for byte).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace bci {

enum CpTag : uint8_t {
  kCpUnusable = 0,  // index 0 and the slot after a Long or Double
  kCpUtf8 = 1,
  kCpInteger = 3,
  kCpFloat = 4,
  kCpLong = 5,
  kCpDouble = 6,
  kCpClass = 7,
  kCpString = 8,
  kCpFieldref = 9,
  kCpMethodref = 10,
  kCpInterfaceMethodref = 11,
  kCpNameAndType = 12,
  kCpMethodHandle = 15,
  kCpMethodType = 16,
  kCpDynamic = 17,
  kCpInvokeDynamic = 18,
  kCpModule = 19,
  kCpPackage = 20,
};

struct CpEntry {
  uint8_t tag = kCpUnusable;
  uint8_t reference_kind = 0;  // MethodHandle
  uint16_t ref1 = 0;  // Class/String/MethodType/Module/Package: utf8; refs: class; NameAndType:
                      // name; MethodHandle: reference; Dynamic/InvokeDynamic: bootstrap index
  uint16_t ref2 = 0;  // refs and Dynamic/InvokeDynamic: name_and_type; NameAndType: descriptor
  uint64_t bits = 0;  // Integer, Float (low 32 bits), Long, Double
  std::string utf8;   // raw modified UTF-8 bytes
};

struct Attribute {
  uint16_t name_index = 0;
  std::vector<uint8_t> data;
  size_t file_offset = 0;  // offset of data in the input, for error messages
};

struct Member {
  uint16_t access_flags = 0;
  uint16_t name_index = 0;
  uint16_t descriptor_index = 0;
  std::vector<Attribute> attributes;
};

enum AccessFlags : uint16_t {
  kAccStatic = 0x0008,
  kAccSynchronized = 0x0020,
  kAccNative = 0x0100,
  kAccInterface = 0x0200,
  kAccAbstract = 0x0400,
};

class ConstantPool {
 public:
  std::vector<CpEntry> entries;  // entries[0] unused

  size_t size() const { return entries.size(); }
  bool valid(uint16_t index, uint8_t tag) const {
    return index > 0 && index < entries.size() && entries[index].tag == tag;
  }
  const std::string& utf8(uint16_t index) const;        // requires a Utf8 entry
  const std::string& class_name(uint16_t index) const;  // requires a Class entry

  // Find-or-add helpers for instrumentation. Throw std::length_error when the pool is full.
  uint16_t add_utf8(std::string_view s);
  uint16_t add_class(std::string_view name);
  uint16_t add_integer(int32_t v);
  uint16_t add_name_and_type(std::string_view name, std::string_view descriptor);
  uint16_t add_methodref(std::string_view owner, std::string_view name,
                         std::string_view descriptor);

 private:
  uint16_t append(CpEntry e);
  void index_existing();
  std::string key(const CpEntry& e) const;

  size_t indexed_up_to_ = 0;
  std::unordered_map<std::string, uint16_t> lookup_;
};

struct ClassFile {
  uint16_t minor_version = 0;
  uint16_t major_version = 0;
  ConstantPool cp;
  uint16_t access_flags = 0;
  uint16_t this_class = 0;
  uint16_t super_class = 0;
  std::vector<uint16_t> interfaces;
  std::vector<Member> fields;
  std::vector<Member> methods;
  std::vector<Attribute> attributes;

  std::string name() const { return cp.class_name(this_class); }
  const std::string& member_name(const Member& m) const { return cp.utf8(m.name_index); }
  const std::string& member_descriptor(const Member& m) const {
    return cp.utf8(m.descriptor_index);
  }
  // Code attributes before 45.3 use u1 max_stack/max_locals and a u2 code length.
  bool legacy_code_layout() const { return major_version == 45 && minor_version < 3; }
  Attribute* find_attribute(Member& m, std::string_view name);
};

// Parses the class structure and checks constant-pool references. Throws ClassFormatError.
ClassFile parse_class(std::span<const uint8_t> bytes);
std::vector<uint8_t> write_class(const ClassFile& cf);

// Number of argument slots (long/double count 2) of a method descriptor; -1 when malformed.
int descriptor_argument_slots(std::string_view descriptor);

}  // namespace bci
