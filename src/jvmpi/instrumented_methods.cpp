// SPDX-License-Identifier: Apache-2.0
#include "instrumented_methods.h"

#include <algorithm>
#include <limits>
#include <new>

namespace jvmpi {

struct InstrumentedMethods::Method {
  std::atomic<jmethodID> id;
  uint32_t name;  // offsets into text()
  uint32_t name_length;
  uint32_t descriptor;
  uint32_t descriptor_length;
  uint32_t first_switch;  // index into switches()
  uint32_t switch_count;
};

struct InstrumentedMethods::Switch {
  uint32_t offset;     // of the lookupswitch in the original code
  uint32_t first_key;  // index into keys(): the match keys, ascending
  uint32_t key_count;
};

namespace {

// The parts follow the header in this order, each at an 8-byte boundary.
constexpr size_t kAlign = alignof(std::max_align_t) < 8 ? 8 : alignof(std::max_align_t);

size_t aligned(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

InstrumentedMethods::Method* InstrumentedMethods::methods() const {
  auto* base = reinterpret_cast<char*>(const_cast<InstrumentedMethods*>(this));
  return reinterpret_cast<Method*>(base + aligned(sizeof(InstrumentedMethods)));
}

const InstrumentedMethods::Switch* InstrumentedMethods::switches() const {
  return reinterpret_cast<const Switch*>(reinterpret_cast<const char*>(methods()) +
                                         aligned(sizeof(Method) * method_count_));
}

const int32_t* InstrumentedMethods::keys() const {
  return reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(switches()) +
                                          aligned(sizeof(Switch) * switch_count_));
}

const char* InstrumentedMethods::text() const {
  return reinterpret_cast<const char*>(keys()) + aligned(sizeof(int32_t) * key_count_);
}

InstrumentedMethods* InstrumentedMethods::create(BlockArena& arena,
                                                 const std::vector<bci::MethodInfo>& methods) {
  size_t switch_count = 0;
  size_t key_count = 0;
  size_t text_bytes = 0;
  for (const bci::MethodInfo& m : methods) {
    switch_count += m.lookup_switches.size();
    for (const bci::LookupSwitch& s : m.lookup_switches) key_count += s.keys.size();
    text_bytes += m.name.size() + m.descriptor.size();
  }
  constexpr size_t kMax = std::numeric_limits<uint32_t>::max();
  if (methods.size() > kMax || switch_count > kMax || key_count > kMax || text_bytes > kMax) {
    return nullptr;
  }
  const size_t bytes =
      aligned(sizeof(InstrumentedMethods)) + aligned(sizeof(Method) * methods.size()) +
      aligned(sizeof(Switch) * switch_count) + aligned(sizeof(int32_t) * key_count) + text_bytes;
  void* memory = arena.allocate(bytes, kAlign);
  if (memory == nullptr) return nullptr;

  auto* table = new (memory) InstrumentedMethods();
  table->method_count_ = static_cast<uint32_t>(methods.size());
  table->switch_count_ = static_cast<uint32_t>(switch_count);
  table->key_count_ = static_cast<uint32_t>(key_count);
  auto* switch_out = const_cast<Switch*>(table->switches());
  auto* key_out = const_cast<int32_t*>(table->keys());
  auto* text_out = const_cast<char*>(table->text());
  uint32_t next_switch = 0;
  uint32_t next_key = 0;
  uint32_t next_text = 0;
  auto put_text = [&](const std::string& s, uint32_t& at, uint32_t& length) {
    std::copy(s.begin(), s.end(), text_out + next_text);
    at = next_text;
    length = static_cast<uint32_t>(s.size());
    next_text += length;
  };
  for (size_t i = 0; i < methods.size(); ++i) {
    const bci::MethodInfo& m = methods[i];
    auto* method = new (&table->methods()[i]) Method{};
    method->id.store(nullptr, std::memory_order_relaxed);
    put_text(m.name, method->name, method->name_length);
    put_text(m.descriptor, method->descriptor, method->descriptor_length);
    method->first_switch = next_switch;
    method->switch_count = static_cast<uint32_t>(m.lookup_switches.size());
    for (const bci::LookupSwitch& s : m.lookup_switches) {
      switch_out[next_switch++] = Switch{s.offset, next_key, static_cast<uint32_t>(s.keys.size())};
      next_key = static_cast<uint32_t>(std::copy(s.keys.begin(), s.keys.end(), key_out + next_key) -
                                       key_out);
    }
  }
  return table;
}

std::string_view InstrumentedMethods::name(size_t method) const {
  const Method& m = methods()[method];
  return {text() + m.name, m.name_length};
}

std::string_view InstrumentedMethods::descriptor(size_t method) const {
  const Method& m = methods()[method];
  return {text() + m.descriptor, m.descriptor_length};
}

std::atomic<jmethodID>& InstrumentedMethods::id(size_t method) {
  return methods()[method].id;
}

int InstrumentedMethods::lookup_pair(size_t method, uint32_t offset, int32_t key) const {
  const Method& m = methods()[method];
  const Switch* first = switches() + m.first_switch;
  for (const Switch* s = first; s != first + m.switch_count; ++s) {
    if (s->offset != offset) continue;
    const int32_t* begin = keys() + s->first_key;
    const int32_t* end = begin + s->key_count;
    const int32_t* it = std::lower_bound(begin, end, key);
    return (it != end && *it == key) ? static_cast<int>(it - begin) : -1;
  }
  return -1;
}

}  // namespace jvmpi
