// SPDX-License-Identifier: Apache-2.0
// Type codes, names and value encoding shared by the writer and the reader.
#include <bit>
#include <stdexcept>

#include "byte_io.h"
#include "hprof_format.h"

namespace hprof {

bool is_valid_type(uint8_t code) {
  return code == 2 || (code >= 4 && code <= 11);
}

size_t type_size(BasicType type, uint32_t id_size) {
  switch (type) {
    case BasicType::kObject:
      return id_size;
    case BasicType::kBoolean:
    case BasicType::kByte:
      return 1;
    case BasicType::kChar:
    case BasicType::kShort:
      return 2;
    case BasicType::kFloat:
    case BasicType::kInt:
      return 4;
    case BasicType::kDouble:
    case BasicType::kLong:
      return 8;
  }
  throw std::invalid_argument("invalid type code " + std::to_string(static_cast<int>(type)));
}

std::string_view type_name(BasicType type) {
  switch (type) {
    case BasicType::kObject:
      return "object";
    case BasicType::kBoolean:
      return "boolean";
    case BasicType::kChar:
      return "char";
    case BasicType::kFloat:
      return "float";
    case BasicType::kDouble:
      return "double";
    case BasicType::kByte:
      return "byte";
    case BasicType::kShort:
      return "short";
    case BasicType::kInt:
      return "int";
    case BasicType::kLong:
      return "long";
  }
  return "unknown";
}

std::string_view record_name(Tag tag) {
  switch (tag) {
    case Tag::kUtf8:
      return "UTF8";
    case Tag::kLoadClass:
      return "LOAD CLASS";
    case Tag::kUnloadClass:
      return "UNLOAD CLASS";
    case Tag::kStackFrame:
      return "STACK FRAME";
    case Tag::kStackTrace:
      return "STACK TRACE";
    case Tag::kAllocSites:
      return "ALLOC SITES";
    case Tag::kHeapSummary:
      return "HEAP SUMMARY";
    case Tag::kStartThread:
      return "START THREAD";
    case Tag::kEndThread:
      return "END THREAD";
    case Tag::kHeapDump:
      return "HEAP DUMP";
    case Tag::kCpuSamples:
      return "CPU SAMPLES";
    case Tag::kControlSettings:
      return "CONTROL SETTINGS";
    case Tag::kHeapDumpSegment:
      return "HEAP DUMP SEGMENT";
    case Tag::kHeapDumpEnd:
      return "HEAP DUMP END";
  }
  return "unknown";
}

std::string_view subrecord_name(SubTag tag) {
  switch (tag) {
    case SubTag::kRootUnknown:
      return "ROOT UNKNOWN";
    case SubTag::kRootJniGlobal:
      return "ROOT JNI GLOBAL";
    case SubTag::kRootJniLocal:
      return "ROOT JNI LOCAL";
    case SubTag::kRootJavaFrame:
      return "ROOT JAVA FRAME";
    case SubTag::kRootNativeStack:
      return "ROOT NATIVE STACK";
    case SubTag::kRootStickyClass:
      return "ROOT STICKY CLASS";
    case SubTag::kRootThreadBlock:
      return "ROOT THREAD BLOCK";
    case SubTag::kRootMonitorUsed:
      return "ROOT MONITOR USED";
    case SubTag::kRootThreadObject:
      return "ROOT THREAD OBJECT";
    case SubTag::kClassDump:
      return "CLASS DUMP";
    case SubTag::kInstanceDump:
      return "INSTANCE DUMP";
    case SubTag::kObjArrayDump:
      return "OBJ ARRAY DUMP";
    case SubTag::kPrimArrayDump:
      return "PRIM ARRAY DUMP";
  }
  return "unknown";
}

Value Value::of_float(float v) {
  return {BasicType::kFloat, std::bit_cast<uint32_t>(v)};
}
Value Value::of_double(double v) {
  return {BasicType::kDouble, std::bit_cast<uint64_t>(v)};
}
float Value::as_float() const {
  return std::bit_cast<float>(static_cast<uint32_t>(bits));
}
double Value::as_double() const {
  return std::bit_cast<double>(bits);
}

void append_value(std::vector<uint8_t>& out, const Value& value, uint32_t id_size) {
  size_t n = type_size(value.type, id_size);
  if (n < 8 && (value.bits >> (8 * n)) != 0) {
    throw std::invalid_argument(std::string(type_name(value.type)) + " value " +
                                std::to_string(value.bits) + " does not fit in " +
                                std::to_string(n) + " bytes");
  }
  for (size_t i = n; i-- > 0;) out.push_back(static_cast<uint8_t>(value.bits >> (8 * i)));
}

uint64_t PrimArrayDump::element_bits(size_t i) const {
  size_t n = type_size(type, 8);
  if (i >= length || (i + 1) * n > data.size()) throw std::out_of_range("array index");
  return detail::load_be(data.data() + i * n, n);
}

void Sink::patch(uint64_t, const void*, size_t) {
  throw std::logic_error("hprof::Sink::patch on a sink that is not seekable");
}

}  // namespace hprof
