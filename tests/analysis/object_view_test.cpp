// SPDX-License-Identifier: Apache-2.0
// The object view (fields with values, paged elements, statics, referrers) on synthetic dumps
// whose contents are known, and text (format=a) heap dumps written by hand from
// docs/hprof-text-format.md: converted, they answer like binary dumps; bad ones are one error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "analysis.h"
#include "synthetic_dump.h"
#include "test_files.h"

using analysis::HeapDump;
using analysis::ObjectDetail;
using analysis_test::SyntheticDump;
using hprof::BasicType;
using hprof::Value;

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("objects", name);
}

const analysis::SlotValue* slot(const std::vector<analysis::SlotValue>& slots,
                                const std::string& name) {
  for (const auto& s : slots)
    if (s.name == name) return &s;
  return nullptr;
}

// Base { Object tag; int count } <- Item { Item next; long weight; char letter; boolean flag };
// Registry (class) has statics `first` (an Item) and `items` (Item[4] {a, b, null, a}).
struct ItemHeap {
  SyntheticDump dump{8, hprof::Version::k1_0_2};
  uint64_t base, item, a, b, c, array, registry, tag;

  ItemHeap() {
    uint64_t object = dump.add_class("java/lang/Object", 0, {});
    base =
        dump.add_class("Base", object, {{"tag", BasicType::kObject}, {"count", BasicType::kInt}});
    item = dump.add_class("Item", base,
                          {{"next", BasicType::kObject},
                           {"weight", BasicType::kLong},
                           {"letter", BasicType::kChar},
                           {"flag", BasicType::kBoolean}});
    uint64_t item_array = dump.add_class("[LItem;", object, {});
    tag = dump.add_int_array(3);
    // Values: own fields first, then the superclass's.
    c = dump.add_instance(item, {Value::of_object(0), Value::of_long(-5), Value::of_char('\n'),
                                 Value::of_boolean(false), Value::of_object(0), Value::of_int(0)});
    b = dump.add_instance(item, {Value::of_object(c), Value::of_long(1) /* */, Value::of_char('z'),
                                 Value::of_boolean(false), Value::of_object(0), Value::of_int(2)});
    a = dump.add_instance(item,
                          {Value::of_object(b), Value::of_long(1234567890123), Value::of_char('A'),
                           Value::of_boolean(true), Value::of_object(tag), Value::of_int(-7)});
    array = dump.add_object_array(item_array, {a, b, 0, a});
    registry = dump.add_class("Registry", object, {}, {{"first", a}, {"items", array}});
  }
};

TEST(ObjectView, FieldsOfTheWholeChainWithTheirValues) {
  ItemHeap heap;
  const std::string path = temp_path("items.hprof");
  heap.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  auto o = d->object_detail(heap.a);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->kind, ObjectDetail::Kind::kInstance);
  EXPECT_EQ(o->object.class_name, "Item");
  EXPECT_EQ(o->class_id, heap.item);
  ASSERT_EQ(o->fields.size(), 6u);
  EXPECT_EQ(o->fields[0].name, "next") << "own fields first";
  EXPECT_EQ(o->fields[4].name, "tag");
  EXPECT_EQ(o->fields[4].declared_by, "Base");
  EXPECT_EQ(o->fields[0].declared_by, "Item");
  const auto* next = slot(o->fields, "next");
  ASSERT_TRUE(next && next->reference && next->target == heap.b && next->target_info);
  EXPECT_EQ(next->target_info->class_name, "Item");
  EXPECT_EQ(slot(o->fields, "weight")->value, "1234567890123");
  EXPECT_EQ(slot(o->fields, "weight")->type, "long");
  EXPECT_EQ(slot(o->fields, "letter")->value, "'A'");
  EXPECT_EQ(slot(o->fields, "flag")->value, "true");
  EXPECT_EQ(slot(o->fields, "count")->value, "-7");
  EXPECT_EQ(slot(o->fields, "tag")->target_info->class_name, "int[]");

  auto last = d->object_detail(heap.c);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(slot(last->fields, "next")->value, "null");
  EXPECT_FALSE(slot(last->fields, "next")->target_info.has_value());
  EXPECT_EQ(slot(last->fields, "letter")->value, "'\\u000a'") << "control characters escaped";
  EXPECT_EQ(slot(last->fields, "weight")->value, "-5");

  EXPECT_FALSE(d->object_detail(987654321).has_value());
}

TEST(ObjectView, ArrayElementsArePaged) {
  ItemHeap heap;
  const std::string path = temp_path("items-array.hprof");
  heap.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  auto page = d->object_detail(heap.array, 1, 2);
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->kind, ObjectDetail::Kind::kObjectArray);
  EXPECT_EQ(page->length, 4u);
  EXPECT_EQ(page->element_offset, 1u);
  ASSERT_EQ(page->elements.size(), 2u);
  EXPECT_EQ(page->elements[0].name, "[1]");
  EXPECT_EQ(page->elements[0].target, heap.b);
  EXPECT_EQ(page->elements[1].name, "[2]");
  EXPECT_EQ(page->elements[1].value, "null");
  auto past = d->object_detail(heap.array, 10, 5);
  ASSERT_TRUE(past.has_value());
  EXPECT_TRUE(past->elements.empty());
  auto ints = d->object_detail(heap.tag);
  ASSERT_TRUE(ints.has_value());
  EXPECT_EQ(ints->kind, ObjectDetail::Kind::kPrimitiveArray);
  ASSERT_EQ(ints->elements.size(), 3u);
  EXPECT_EQ(ints->elements[2].type, "int");
}

TEST(ObjectView, ClassObjectsShowStatics) {
  ItemHeap heap;
  const std::string path = temp_path("items-class.hprof");
  heap.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  auto k = d->object_detail(heap.registry);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->kind, ObjectDetail::Kind::kClass);
  EXPECT_EQ(k->class_name, "Registry");
  EXPECT_EQ(k->object.class_name, "class Registry");  // named for the class it is
  ASSERT_EQ(k->statics.size(), 2u);
  EXPECT_EQ(k->statics[0].name, "first");
  EXPECT_EQ(k->statics[0].target, heap.a);
  EXPECT_EQ(k->statics[1].name, "items");
  EXPECT_EQ(k->statics[1].target_info->class_name, "Item[]");
  EXPECT_EQ(k->gc_roots, std::vector<std::string>{"system class"});
  auto item = d->object_detail(heap.item);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->super_id, heap.base);
}

TEST(ObjectView, ReferrersNameTheFieldElementOrStaticAndArePaged) {
  ItemHeap heap;
  const std::string path = temp_path("items-referrers.hprof");
  heap.dump.write(path);
  auto d = HeapDump::open(path, {.use_index_file = false});
  // a: the array (twice: [0] and [3] are one edge each) and Registry's static `first`.
  auto all = d->referrers(heap.a, 0, 100);
  std::multiset<std::string> vias;
  for (const auto& r : all.referrers) vias.insert(r.via);
  EXPECT_EQ(all.total, all.referrers.size());
  EXPECT_EQ(vias.count("static first"), 1u);
  EXPECT_GE(vias.count("[0]"), 1u);
  // b: a.next and the array.
  auto b = d->referrers(heap.b, 0, 100);
  ASSERT_EQ(b.total, 2u);
  std::set<std::string> b_vias{b.referrers[0].via, b.referrers[1].via};
  EXPECT_EQ(b_vias, (std::set<std::string>{"next", "[1]"}));
  auto second = d->referrers(heap.b, 1, 5);
  EXPECT_EQ(second.total, 2u);
  ASSERT_EQ(second.referrers.size(), 1u);
  EXPECT_EQ(second.referrers[0].object.id, b.referrers[1].object.id);
  // c: only b.next.
  auto c = d->referrers(heap.c, 0, 100);
  ASSERT_EQ(c.total, 1u);
  EXPECT_EQ(c.referrers[0].object.id, heap.b);
  EXPECT_THROW(d->referrers(987654321, 0, 1), analysis::Error);
}

// A text profile: header, one older complete dump, then the newest (which is the one shown).
std::string text_profile(const std::string& newest_dump) {
  return "JAVA PROFILE 1.0.1, created Mon Nov 23 07:25:44 2026\n\n"
         "Header for -agentlib:hprof (V1.0.1) output\n--------\n\n"
         "THREAD START (obj=50000, id = 200001, name=\"main\", group=\"main\")\n"
         "HEAP DUMP BEGIN (1 objects, 16 bytes) Mon Nov 23 07:25:44 2026\n"
         "ROOT 100 (kind=<unknown>)\n"
         "OBJ 100 (sz=16, trace=300000, class=Old@10)\n"
         "CLS 10 (name=Old, trace=300000)\n"
         "HEAP DUMP END\n" +
         newest_dump;
}

// The planted heap: Holder (static `head`) -> Cell chain of 3; a Cell[] of 4 holds the first and
// last cells; a Sub extends Cell and has its own `extra`; Cell instances are 24 bytes (a ref,
// a long); byte[10]; a <Java stack> root on the array.
const char* kPlantedDump =
    "HEAP DUMP BEGIN (7 objects, 150 bytes) Mon Nov 23 07:25:44 2026\n"
    "ROOT 2000 (kind=<Java stack>, thread=200001, frame=1)\n"
    "ROOT 20 (kind=<system class>, name=Holder)\n"
    "ROOT 50000 (kind=<thread>, id=200001, trace=300000)\n"
    "OBJ 1000 (sz=24, trace=300001, class=Cell@30)\n"
    "\tnext\t\t1008\n"
    "OBJ 1008 (sz=24, trace=300001, class=Cell@30)\n"
    "\tnext\t\t1010\n"
    "OBJ 1010 (sz=24, trace=300001, class=Cell@30)\n"
    "OBJ 1018 (sz=32, trace=300001, class=Sub@40)\n"
    "\textra\t\t1800\n"
    "\tnext\t\t1000\n"
    "ARR 1800 (sz=10, trace=300002, nelems=10, elem type=byte[])\n"
    "ARR 2000 (sz=16, trace=300002, nelems=4, elem type=Cell[]@50)\n"
    "\t[0]\t\t1000\n"
    "\t[3]\t\t1010\n"
    "OBJ 50000 (sz=16, trace=300000, class=java.lang.Thread@60)\n"
    "CLS 20 (name=Holder, trace=300000)\n"
    "\tsuper\t\t70\n"
    "\tstatic head\t1000\n"
    "CLS 30 (name=Cell, trace=300000)\n"
    "\tsuper\t\t70\n"
    "CLS 40 (name=Sub, trace=300000)\n"
    "\tsuper\t\t30\n"
    "CLS 50 (name=Cell[], trace=300000)\n"
    "\tsuper\t\t70\n"
    "CLS 60 (name=java.lang.Thread, trace=300000)\n"
    "\tsuper\t\t70\n"
    "CLS 70 (name=java.lang.Object, trace=300000)\n"
    "CLS 80 (name=byte[], trace=300000)\n"
    "\tsuper\t\t70\n"
    "HEAP DUMP END\n";

std::string write_text(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(TextHeapDump, NewestDumpConvertedWithItsSizesFieldsAndReferences) {
  const std::string path = write_text("planted.txt", text_profile(kPlantedDump));
  auto d = HeapDump::open(path, {.use_index_file = false});
  EXPECT_FALSE(std::filesystem::exists(path + ".jvmprof-heap.hprof")) << "scratch only";
  auto s = d->summary();
  EXPECT_TRUE(s.text_dump);
  EXPECT_EQ(s.instances, 5u) << "4 cells and the thread; the older dump's Old is not shown";
  EXPECT_EQ(s.object_arrays, 1u);
  EXPECT_EQ(s.primitive_arrays, 1u);
  auto h = d->class_histogram();
  auto find = [&](const std::string& name) -> const analysis::ClassStats* {
    for (const auto& c : h)
      if (c.name == name) return &c;
    return nullptr;
  };
  ASSERT_TRUE(find("Cell"));
  EXPECT_FALSE(find("Old"));
  EXPECT_EQ(find("Cell")->instances, 3u);
  EXPECT_EQ(find("Cell")->shallow_bytes, 3u * 24) << "sz= kept through padding";
  EXPECT_EQ(find("Sub")->shallow_bytes, 32u);
  EXPECT_EQ(find("byte[]")->shallow_bytes, 32u) << "16 + 10, aligned";
  EXPECT_EQ(find("Cell[]")->shallow_bytes, 32u) << "16 + 4 x 4";

  // Fields: references only, padding hidden; Sub's own field, then the inherited one.
  auto sub = d->object_detail(0x1018);
  ASSERT_TRUE(sub.has_value());
  ASSERT_EQ(sub->fields.size(), 2u);
  EXPECT_EQ(sub->fields[0].name, "extra");
  EXPECT_EQ(sub->fields[0].declared_by, "Sub");
  EXPECT_EQ(sub->fields[1].name, "next");
  EXPECT_EQ(sub->fields[1].declared_by, "Cell");
  EXPECT_EQ(sub->fields[1].target, 0x1000u);
  auto last = d->object_detail(0x1010);
  ASSERT_EQ(last->fields.size(), 1u);
  EXPECT_EQ(last->fields[0].value, "null");
  auto array = d->object_detail(0x2000);
  ASSERT_EQ(array->length, 4u);
  EXPECT_EQ(array->elements[3].target, 0x1010u);
  EXPECT_EQ(array->elements[1].value, "null");
  EXPECT_EQ(array->gc_roots, std::vector<std::string>{"Java frame"});
  auto holder = d->object_detail(0x20);
  ASSERT_EQ(holder->statics.size(), 1u);
  EXPECT_EQ(holder->statics[0].name, "head");
  EXPECT_EQ(holder->statics[0].target, 0x1000u);

  // Referrers and paths as in a binary dump.
  auto refs = d->referrers(0x1000, 0, 10);
  std::set<std::string> vias;
  for (const auto& r : refs.referrers) vias.insert(r.via);
  EXPECT_EQ(vias, (std::set<std::string>{"static head", "[0]", "next"}));
  auto paths = d->paths_to(0x1008, 1);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].back().via, "next");
  EXPECT_TRUE(d->duplicate_strings(5, 1).top.empty());
}

TEST(TextHeapDump, BadInputIsOneErrorNamingTheLine) {
  // Cut inside the newest dump: the older complete one is shown.
  const std::string cut = text_profile(std::string(kPlantedDump).substr(0, 300));
  auto d = HeapDump::open(write_text("cut.txt", cut), {.use_index_file = false});
  EXPECT_EQ(d->summary().instances, 1u);

  const std::string none = "JAVA PROFILE 1.0.1, created Mon Nov 23 07:25:44 2026\n\n--------\n";
  try {
    HeapDump::open(write_text("none.txt", none), {.use_index_file = false});
    FAIL() << "no heap dump";
  } catch (const analysis::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no complete HEAP DUMP"), std::string::npos) << e.what();
  }
  std::string bad = kPlantedDump;
  bad.replace(bad.find("OBJ 1008"), 8, "OBJ zz\x01z");
  try {
    HeapDump::open(write_text("bad.txt", text_profile(bad)), {.use_index_file = false});
    FAIL() << "malformed record";
  } catch (const analysis::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("line 18"), std::string::npos) << what;
    EXPECT_EQ(what.find('\x01'), std::string::npos) << "one printable line";
  }
}

}  // namespace
