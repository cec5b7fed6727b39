// SPDX-License-Identifier: Apache-2.0
#include "class_file.h"

#include <stdexcept>

#include "byte_io.h"

namespace bci {

ClassFormatError::ClassFormatError(const std::string& problem, size_t offset)
    : std::runtime_error(problem + " at offset " + std::to_string(offset)), offset_(offset) {}

namespace {

constexpr uint16_t kMaxMajorVersion = 69;  // JDK 25

void check_ref(const ConstantPool& cp, uint16_t index, uint8_t tag, const char* what,
               size_t offset) {
  if (!cp.valid(index, tag)) {
    throw ClassFormatError(
        std::string("bad constant pool index ") + std::to_string(index) + " for " + what, offset);
  }
}

void check_constant_pool(const ConstantPool& cp, const std::vector<size_t>& offsets) {
  for (size_t i = 1; i < cp.size(); ++i) {
    const CpEntry& e = cp.entries[i];
    size_t at = offsets[i];
    switch (e.tag) {
      case kCpClass:
      case kCpString:
      case kCpMethodType:
      case kCpModule:
      case kCpPackage:
        check_ref(cp, e.ref1, kCpUtf8, "constant name", at);
        break;
      case kCpFieldref:
      case kCpMethodref:
      case kCpInterfaceMethodref:
        check_ref(cp, e.ref1, kCpClass, "member class", at);
        check_ref(cp, e.ref2, kCpNameAndType, "member name and type", at);
        break;
      case kCpNameAndType:
        check_ref(cp, e.ref1, kCpUtf8, "name", at);
        check_ref(cp, e.ref2, kCpUtf8, "descriptor", at);
        break;
      case kCpDynamic:
      case kCpInvokeDynamic:
        check_ref(cp, e.ref2, kCpNameAndType, "dynamic name and type", at);
        break;
      case kCpMethodHandle: {
        if (e.reference_kind < 1 || e.reference_kind > 9) {
          throw ClassFormatError("bad method handle kind " + std::to_string(e.reference_kind), at);
        }
        uint16_t r = e.ref1;
        bool ok = e.reference_kind <= 4
                      ? cp.valid(r, kCpFieldref)
                      : cp.valid(r, kCpMethodref) || cp.valid(r, kCpInterfaceMethodref);
        if (!ok) {
          throw ClassFormatError("bad method handle reference " + std::to_string(r), at);
        }
        break;
      }
      default:
        break;
    }
  }
}

std::vector<Attribute> read_attributes(ByteReader& r, const ConstantPool& cp) {
  uint16_t count = r.u2("attributes_count");
  std::vector<Attribute> attributes(count);
  for (auto& a : attributes) {
    size_t at = r.file_offset();
    a.name_index = r.u2("attribute name");
    check_ref(cp, a.name_index, kCpUtf8, "attribute name", at);
    uint32_t length = r.u4("attribute length");
    a.file_offset = r.file_offset();
    auto data = r.bytes(length, "attribute data");
    a.data.assign(data.begin(), data.end());
  }
  return attributes;
}

std::vector<Member> read_members(ByteReader& r, const ConstantPool& cp, const char* what) {
  uint16_t count = r.u2(what);
  std::vector<Member> members(count);
  for (auto& m : members) {
    size_t at = r.file_offset();
    m.access_flags = r.u2("member access flags");
    m.name_index = r.u2("member name");
    m.descriptor_index = r.u2("member descriptor");
    check_ref(cp, m.name_index, kCpUtf8, "member name", at);
    check_ref(cp, m.descriptor_index, kCpUtf8, "member descriptor", at);
    m.attributes = read_attributes(r, cp);
  }
  return members;
}

void write_attributes(ByteWriter& w, const std::vector<Attribute>& attributes) {
  w.u2(static_cast<uint32_t>(attributes.size()));
  for (const auto& a : attributes) {
    w.u2(a.name_index);
    w.u4(static_cast<uint32_t>(a.data.size()));
    w.bytes(a.data);
  }
}

void write_members(ByteWriter& w, const std::vector<Member>& members) {
  w.u2(static_cast<uint32_t>(members.size()));
  for (const auto& m : members) {
    w.u2(m.access_flags);
    w.u2(m.name_index);
    w.u2(m.descriptor_index);
    write_attributes(w, m.attributes);
  }
}

}  // namespace

const std::string& ConstantPool::utf8(uint16_t index) const {
  if (!valid(index, kCpUtf8)) throw std::logic_error("not a Utf8 constant");
  return entries[index].utf8;
}

const std::string& ConstantPool::class_name(uint16_t index) const {
  if (!valid(index, kCpClass)) throw std::logic_error("not a Class constant");
  return utf8(entries[index].ref1);
}

std::string ConstantPool::key(const CpEntry& e) const {
  std::string k(1, static_cast<char>(e.tag));
  switch (e.tag) {
    case kCpUtf8:
      return k + e.utf8;
    case kCpInteger:
      return k + std::to_string(e.bits);
    case kCpClass:
      return k + utf8(e.ref1);
    case kCpNameAndType:
      return k + utf8(e.ref1) + '\0' + utf8(e.ref2);
    case kCpMethodref: {
      const CpEntry& nat = entries[e.ref2];
      return k + class_name(e.ref1) + '\0' + utf8(nat.ref1) + '\0' + utf8(nat.ref2);
    }
    default:
      return {};  // other kinds are never looked up
  }
}

void ConstantPool::index_existing() {
  for (; indexed_up_to_ < entries.size(); ++indexed_up_to_) {
    std::string k = key(entries[indexed_up_to_]);
    if (!k.empty()) lookup_.emplace(std::move(k), static_cast<uint16_t>(indexed_up_to_));
  }
}

uint16_t ConstantPool::append(CpEntry e) {
  index_existing();
  std::string k = key(e);
  if (auto it = lookup_.find(k); it != lookup_.end()) return it->second;
  if (entries.size() >= 0xFFFF) throw std::length_error("constant pool full");
  entries.push_back(std::move(e));
  uint16_t index = static_cast<uint16_t>(entries.size() - 1);
  lookup_.emplace(std::move(k), index);
  indexed_up_to_ = entries.size();
  return index;
}

uint16_t ConstantPool::add_utf8(std::string_view s) {
  CpEntry e;
  e.tag = kCpUtf8;
  e.utf8 = std::string(s);
  return append(std::move(e));
}

uint16_t ConstantPool::add_class(std::string_view name) {
  CpEntry e;
  e.tag = kCpClass;
  e.ref1 = add_utf8(name);
  return append(std::move(e));
}

uint16_t ConstantPool::add_integer(int32_t v) {
  CpEntry e;
  e.tag = kCpInteger;
  e.bits = static_cast<uint32_t>(v);
  return append(std::move(e));
}

uint16_t ConstantPool::add_name_and_type(std::string_view name, std::string_view descriptor) {
  CpEntry e;
  e.tag = kCpNameAndType;
  e.ref1 = add_utf8(name);
  e.ref2 = add_utf8(descriptor);
  return append(std::move(e));
}

uint16_t ConstantPool::add_methodref(std::string_view owner, std::string_view name,
                                     std::string_view descriptor) {
  CpEntry e;
  e.tag = kCpMethodref;
  e.ref1 = add_class(owner);
  e.ref2 = add_name_and_type(name, descriptor);
  return append(std::move(e));
}

Attribute* ClassFile::find_attribute(Member& m, std::string_view name) {
  for (auto& a : m.attributes) {
    if (cp.utf8(a.name_index) == name) return &a;
  }
  return nullptr;
}

ClassFile parse_class(std::span<const uint8_t> bytes) {
  ByteReader r(bytes);
  ClassFile cf;
  if (r.u4("magic") != 0xCAFEBABE) throw ClassFormatError("bad magic number", 0);
  cf.minor_version = r.u2("minor_version");
  cf.major_version = r.u2("major_version");
  if (cf.major_version < 45 || cf.major_version > kMaxMajorVersion) {
    throw ClassFormatError("unsupported class file version " + std::to_string(cf.major_version), 6);
  }
  uint16_t cp_count = r.u2("constant_pool_count");
  if (cp_count == 0) r.fail("constant_pool_count is zero");
  cf.cp.entries.resize(cp_count);
  std::vector<size_t> offsets(cp_count);
  for (size_t i = 1; i < cp_count; ++i) {
    offsets[i] = r.file_offset();
    CpEntry& e = cf.cp.entries[i];
    e.tag = r.u1("constant tag");
    switch (e.tag) {
      case kCpUtf8: {
        uint16_t length = r.u2("Utf8 length");
        auto b = r.bytes(length, "Utf8 bytes");
        e.utf8.assign(b.begin(), b.end());
        break;
      }
      case kCpInteger:
      case kCpFloat:
        e.bits = r.u4("constant value");
        break;
      case kCpLong:
      case kCpDouble: {
        uint64_t high = r.u4("constant value");
        e.bits = high << 32 | r.u4("constant value");
        if (i + 1 >= cp_count) {
          throw ClassFormatError("8-byte constant in the last constant pool slot", offsets[i]);
        }
        ++i;  // the following slot is unusable
        break;
      }
      case kCpClass:
      case kCpString:
      case kCpMethodType:
      case kCpModule:
      case kCpPackage:
        e.ref1 = r.u2("constant reference");
        break;
      case kCpFieldref:
      case kCpMethodref:
      case kCpInterfaceMethodref:
      case kCpNameAndType:
      case kCpDynamic:
      case kCpInvokeDynamic:
        e.ref1 = r.u2("constant reference");
        e.ref2 = r.u2("constant reference");
        break;
      case kCpMethodHandle:
        e.reference_kind = r.u1("method handle kind");
        e.ref1 = r.u2("method handle reference");
        break;
      default:
        throw ClassFormatError("bad constant pool tag " + std::to_string(e.tag), offsets[i]);
    }
  }
  check_constant_pool(cf.cp, offsets);
  size_t at = r.file_offset();
  cf.access_flags = r.u2("access_flags");
  cf.this_class = r.u2("this_class");
  cf.super_class = r.u2("super_class");
  check_ref(cf.cp, cf.this_class, kCpClass, "this_class", at + 2);
  if (cf.super_class != 0) check_ref(cf.cp, cf.super_class, kCpClass, "super_class", at + 4);
  uint16_t interfaces = r.u2("interfaces_count");
  cf.interfaces.resize(interfaces);
  for (auto& i : cf.interfaces) {
    at = r.file_offset();
    i = r.u2("interface");
    check_ref(cf.cp, i, kCpClass, "interface", at);
  }
  cf.fields = read_members(r, cf.cp, "fields_count");
  cf.methods = read_members(r, cf.cp, "methods_count");
  cf.attributes = read_attributes(r, cf.cp);
  if (!r.at_end()) r.fail("extra bytes after the class file");
  return cf;
}

std::vector<uint8_t> write_class(const ClassFile& cf) {
  ByteWriter w;
  w.u4(0xCAFEBABE);
  w.u2(cf.minor_version);
  w.u2(cf.major_version);
  w.u2(static_cast<uint32_t>(cf.cp.size()));
  for (size_t i = 1; i < cf.cp.size(); ++i) {
    const CpEntry& e = cf.cp.entries[i];
    w.u1(e.tag);
    switch (e.tag) {
      case kCpUtf8:
        w.u2(static_cast<uint32_t>(e.utf8.size()));
        w.bytes(e.utf8);
        break;
      case kCpInteger:
      case kCpFloat:
        w.u4(static_cast<uint32_t>(e.bits));
        break;
      case kCpLong:
      case kCpDouble:
        w.u4(static_cast<uint32_t>(e.bits >> 32));
        w.u4(static_cast<uint32_t>(e.bits));
        ++i;
        break;
      case kCpMethodHandle:
        w.u1(e.reference_kind);
        w.u2(e.ref1);
        break;
      case kCpFieldref:
      case kCpMethodref:
      case kCpInterfaceMethodref:
      case kCpNameAndType:
      case kCpDynamic:
      case kCpInvokeDynamic:
        w.u2(e.ref1);
        w.u2(e.ref2);
        break;
      default:
        w.u2(e.ref1);
        break;
    }
  }
  w.u2(cf.access_flags);
  w.u2(cf.this_class);
  w.u2(cf.super_class);
  w.u2(static_cast<uint32_t>(cf.interfaces.size()));
  for (uint16_t i : cf.interfaces) w.u2(i);
  write_members(w, cf.fields);
  write_members(w, cf.methods);
  write_attributes(w, cf.attributes);
  return w.take();
}

int descriptor_argument_slots(std::string_view d) {
  if (d.empty() || d[0] != '(') return -1;
  int slots = 0;
  size_t i = 1;
  while (i < d.size() && d[i] != ')') {
    bool array = false;
    while (i < d.size() && d[i] == '[') {
      array = true;
      ++i;
    }
    if (i >= d.size()) return -1;
    char t = d[i];
    if (t == 'L') {
      size_t semi = d.find(';', i);
      if (semi == std::string_view::npos) return -1;
      i = semi + 1;
      ++slots;
    } else if (std::string_view("BCFISZJD").find(t) != std::string_view::npos) {
      ++i;
      slots += (!array && (t == 'J' || t == 'D')) ? 2 : 1;
    } else {
      return -1;
    }
  }
  if (i >= d.size()) return -1;
  return slots;
}

}  // namespace bci
