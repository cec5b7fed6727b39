// SPDX-License-Identifier: Apache-2.0
// Parsers of the JVMPI dump buffers (spec section 4; docs/../shared/jvmpi-abi.md section 7:
// u2/u4/u8 big-endian, IDs native 8-byte pointers): HEAP_DUMP at levels 0, 1 and 2, OBJECT_DUMP
// and MONITOR_DUMP, plus the text files the dump agent writes next to the buffers (class and
// thread tables from CLASS_LOAD and THREAD_START, the dump's call traces).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace jvmpiheap {

using Id = uint64_t;

// ---- What the agent knew from its defining events ----

struct FieldInfo {
  std::string name;
  std::string signature;
};

struct ClassInfo {
  Id id = 0;
  std::string name;
  int num_interfaces = 0;
  std::vector<FieldInfo> statics;    // CLASS_LOAD order
  std::vector<FieldInfo> instances;  // CLASS_LOAD order (the class's own fields)
};

struct Frame {
  Id method = 0;
  int line = 0;
  std::string name;  // "Class.method" or "?"
};

struct AgentTables {
  std::unordered_map<Id, ClassInfo> classes;
  std::unordered_map<std::string, Id> class_by_name;  // first class of that name
  std::map<Id, std::string> threads;                  // env -> thread name
  std::map<Id, std::vector<Frame>> traces;            // env -> frames (from the dump event)
  std::map<std::string, std::string> values;          // other "key value" lines

  Id class_id(const std::string& name) const;
  Id thread_env(const std::string& name) const;  // 0 when unknown
};

// Reads the agent's text file (see agents/heap_agent.h for the line formats).
AgentTables read_agent_tables(const std::string& path);

// ---- Values ----

// JVMPI type codes (jvmpi.h): 2 reference, 4 boolean, 5 char, 6 float, 7 double, 8 byte, 9 short,
// 10 int, 11 long.
int type_of_signature(const std::string& signature);
size_t value_size(int type);  // references: 8

struct Value {
  int type = 0;
  uint64_t bits = 0;  // the value's bytes as an unsigned big-endian number; IDs as stored
  int32_t as_int() const { return static_cast<int32_t>(bits); }
  int64_t as_long() const { return static_cast<int64_t>(bits); }
  float as_float() const;
  double as_double() const;
  Id as_id() const { return bits; }
};

// ---- Heap dump records ----

struct Root {
  int kind = 0;  // JVMPI_GC_ROOT_*
  Id object = 0;
  Id aux = 0;          // JNI global: the reference; JNI local, Java frame, native stack, thread
                       // block: the thread's env
  uint32_t frame = 0;  // JNI local, Java frame: frame number in the thread's trace
};

struct ConstantPoolEntry {
  uint16_t index = 0;
  int type = 0;
  Value value;
};

struct ClassDump {
  Id id = 0, super = 0, loader = 0, signers = 0, protection_domain = 0, name = 0, reserved = 0;
  uint32_t instance_size = 0;
  std::vector<Id> interfaces;
  std::vector<ConstantPoolEntry> constant_pool;
  std::vector<Value> statics;  // level 2: one per CLASS_LOAD static; level 1: references only
  bool known = true;           // the class had a CLASS_LOAD (else: no interfaces or statics read)
};

struct InstanceDump {
  Id id = 0;
  Id class_id = 0;
  std::string data;  // the field values, as dumped
};

struct ObjArrayDump {
  Id id = 0;
  Id element_class = 0;
  std::vector<Id> elements;
};

struct PrimArrayDump {
  Id id = 0;
  int type = 0;
  uint32_t count = 0;
  std::string data;  // big-endian elements (empty at level 1)
  Value element(uint32_t i) const;
};

struct HeapDump {
  int level = 2;
  std::vector<Root> roots;
  std::unordered_map<Id, ClassDump> classes;
  std::unordered_map<Id, InstanceDump> instances;
  std::unordered_map<Id, ObjArrayDump> obj_arrays;
  std::unordered_map<Id, PrimArrayDump> prim_arrays;
  std::vector<std::pair<int, Id>> level0;  // level 0: {type, id}
  size_t records = 0;
  size_t duplicate_ids = 0;  // an ID written for two records
};

// Parses a heap dump buffer; false with a message (naming the byte offset) on malformed input.
bool parse_heap_dump(const std::string& buffer, int level, const AgentTables& tables, HeapDump* out,
                     std::string* error);

// An OBJECT_DUMP buffer: exactly one record at level 2.
bool parse_object_dump(const std::string& buffer, const AgentTables& tables, HeapDump* out,
                       std::string* error);

// A field of an instance by name, found through the class chain (own fields first, then the
// superclass's, as dumped). Primitive fields are absent at level 1.
std::optional<Value> field_value(const HeapDump& dump, const AgentTables& tables,
                                 const InstanceDump& instance, const std::string& field);

// The byte count an INSTANCE_DUMP of this class must have at the dump's level, from the CLASS_LOAD
// field lists along the superclass chain; nullopt when a class of the chain is unknown.
std::optional<size_t> instance_bytes(const HeapDump& dump, const AgentTables& tables, Id class_id);

// A static of a class dump by name (level 2: all; level 1: references only).
std::optional<Value> static_value(const HeapDump& dump, const AgentTables& tables,
                                  const ClassDump& klass, const std::string& field);

// ---- Monitor dump ----

struct MonitorRecord {
  int kind = 0;     // JVMPI_MONITOR_JAVA or JVMPI_MONITOR_RAW
  Id object = 0;    // JAVA: the object
  Id name_ptr = 0;  // RAW: the char* name as dumped
  Id raw_id = 0;    // RAW: the JVMPI_RawMonitor
  Id owner = 0;
  uint32_t entry_count = 0;
  std::vector<Id> waiting_to_enter;
  std::vector<Id> waiting_to_be_notified;
};

bool parse_monitor_dump(const std::string& buffer, std::vector<MonitorRecord>* out,
                        std::string* error);

}  // namespace jvmpiheap
