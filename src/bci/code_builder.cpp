// SPDX-License-Identifier: Apache-2.0
#include "code_builder.h"

#include "byte_io.h"
#include "code.h"

namespace bci {

void CodeBuilder::reserve(size_t labels, size_t bytes) {
  label_places_.reserve(labels);
  label_positions_.reserve(labels);
  bytes_.reserve(bytes);
}

int CodeBuilder::new_label() {
  label_places_.push_back({});
  label_positions_.push_back(0);
  return static_cast<int>(label_places_.size() - 1);
}

// The end of the last run, or the start of the next item: the same offset either way, also when
// the next bytes start a new run (another region).
void CodeBuilder::mark(int label) {
  const auto count = static_cast<uint32_t>(items_.size());
  label_places_[label] = !items_.empty() && items_.back().kind == Kind::kBytes
                             ? Place{count - 1, items_.back().length}
                             : Place{count, 0};
}

// bytes_ grows only at its end, and only the last item takes bytes: each run is contiguous.
CodeBuilder::Item& CodeBuilder::bytes_item() {
  if (items_.empty() || items_.back().kind != Kind::kBytes || items_.back().region != region_) {
    Item item;
    item.kind = Kind::kBytes;
    item.region = region_;
    item.data = static_cast<uint32_t>(bytes_.size());
    items_.push_back(item);
  }
  return items_.back();
}

void CodeBuilder::u1(uint8_t v) {
  ++bytes_item().length;
  bytes_.push_back(v);
}

void CodeBuilder::u2(uint16_t v) {
  u1(static_cast<uint8_t>(v >> 8));
  u1(static_cast<uint8_t>(v));
}

void CodeBuilder::bytes(std::span<const uint8_t> b) {
  bytes_item().length += static_cast<uint32_t>(b.size());
  bytes_.insert(bytes_.end(), b.begin(), b.end());
}

void CodeBuilder::branch(uint8_t opcode, int target, int fallthrough_ref) {
  Item item;
  item.kind = Kind::kBranch;
  item.region = region_;
  item.opcode = opcode;
  item.target = target;
  item.ref = fallthrough_ref;
  items_.push_back(item);
}

void CodeBuilder::tableswitch(int default_target, int32_t low, int32_t high,
                              std::vector<int> targets) {
  Item item;
  item.kind = Kind::kSwitch;
  item.region = region_;
  item.opcode = op::kTableswitch;
  item.target = default_target;
  item.data = static_cast<uint32_t>(switches_.size());
  switches_.push_back({low, high, {}, std::move(targets)});
  items_.push_back(item);
}

void CodeBuilder::lookupswitch(int default_target, std::vector<int32_t> keys,
                               std::vector<int> targets) {
  Item item;
  item.kind = Kind::kSwitch;
  item.region = region_;
  item.opcode = op::kLookupswitch;
  item.target = default_target;
  item.data = static_cast<uint32_t>(switches_.size());
  switches_.push_back({0, 0, std::move(keys), std::move(targets)});
  items_.push_back(item);
}

uint32_t CodeBuilder::size_at(const Item& item, uint32_t offset) const {
  switch (item.kind) {
    case Kind::kBytes:
      return item.length;
    case Kind::kBranch:
      if (!item.widened) return 3;
      return is_conditional_branch(item.opcode) ? 8 : 5;
    case Kind::kSwitch: {
      uint32_t padding = (4 - (offset + 1) % 4) % 4;
      uint32_t body = item.opcode == op::kTableswitch
                          ? 12 + 4 * static_cast<uint32_t>(switches_[item.data].targets.size())
                          : 8 + 8 * static_cast<uint32_t>(switches_[item.data].targets.size());
      return 1 + padding + body;
    }
  }
  return 0;
}

uint32_t CodeBuilder::layout() {
  // Widening only ever grows code, so this reaches a fixed point.
  for (;;) {
    uint32_t pos = 0;
    for (auto& item : items_) {
      item.offset = pos;
      pos += size_at(item, pos);
    }
    for (size_t label = 0; label < label_places_.size(); ++label) {
      const Place& p = label_places_[label];
      label_positions_[label] = (p.item < items_.size() ? items_[p.item].offset : pos) + p.delta;
    }
    bool widened = false;
    for (auto& item : items_) {
      if (item.kind != Kind::kBranch || item.widened) continue;
      int64_t distance = static_cast<int64_t>(label_positions_[item.target]) - item.offset;
      if (distance < -32768 || distance > 32767) {
        item.widened = true;
        widened = true;
      }
    }
    if (!widened) return pos;
  }
}

std::vector<uint8_t> CodeBuilder::emit() const {
  ByteWriter w;
  for (const auto& item : items_) {
    switch (item.kind) {
      case Kind::kBytes:
        w.bytes(std::span(bytes_).subspan(item.data, item.length));
        break;
      case Kind::kBranch: {
        int32_t distance = static_cast<int32_t>(label_positions_[item.target] - item.offset);
        if (!item.widened) {
          w.u1(item.opcode);
          w.u2(static_cast<uint16_t>(distance));
        } else if (is_conditional_branch(item.opcode)) {
          w.u1(inverted_branch(item.opcode));
          w.u2(8);  // over the goto_w
          w.u1(op::kGotoW);
          w.u4(static_cast<uint32_t>(distance - 3));
        } else {
          w.u1(item.opcode == op::kJsr ? op::kJsrW : op::kGotoW);
          w.u4(static_cast<uint32_t>(distance));
        }
        break;
      }
      case Kind::kSwitch: {
        w.u1(item.opcode);
        while (w.size() % 4 != 0) w.u1(0);
        auto rel = [&](int label) {
          return static_cast<uint32_t>(static_cast<int32_t>(label_positions_[label] - item.offset));
        };
        w.u4(rel(item.target));
        const Switch& sw = switches_[item.data];
        if (item.opcode == op::kTableswitch) {
          w.u4(static_cast<uint32_t>(sw.low));
          w.u4(static_cast<uint32_t>(sw.high));
          for (int t : sw.targets) w.u4(rel(t));
        } else {
          w.u4(static_cast<uint32_t>(sw.keys.size()));
          for (size_t i = 0; i < sw.keys.size(); ++i) {
            w.u4(static_cast<uint32_t>(sw.keys[i]));
            w.u4(rel(sw.targets[i]));
          }
        }
        break;
      }
    }
  }
  return w.take();
}

std::vector<CodeBuilder::InvertedBranch> CodeBuilder::inverted_branches() const {
  std::vector<InvertedBranch> out;
  for (const auto& item : items_) {
    if (item.kind == Kind::kBranch && item.widened && is_conditional_branch(item.opcode)) {
      out.push_back({item.offset + 8, item.ref});
    }
  }
  return out;
}

std::vector<CodeBuilder::Region> CodeBuilder::regions() const {
  std::vector<Region> out;
  for (size_t i = 0; i < items_.size(); ++i) {
    const Item& item = items_[i];
    uint32_t size = size_at(item, item.offset);
    if (size == 0) continue;
    if (!out.empty() && out.back().region == item.region && out.back().end == item.offset) {
      out.back().end = item.offset + size;
    } else {
      out.push_back({item.offset, item.offset + size, item.region});
    }
  }
  std::erase_if(out, [](const Region& r) { return r.region == 0; });
  return out;
}

}  // namespace bci
