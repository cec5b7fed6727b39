// SPDX-License-Identifier: Apache-2.0
// The text heap-dump converter's memory is bounded by the classes, not by the text: a text
// profile of ~45 MB (300k instances, big arrays) converts with a peak RSS growth of a few MB,
// checked from the kernel's peak-RSS counter (VmHWM, reset through /proc/self/clear_refs); and
// hostile lines (too long, sizes no object can have) are one error each, without growing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis.h"
#include "test_files.h"
#include "text_dump.h"

namespace {

std::string temp_path(const std::string& name) {
  return analysis_test::temp_path("textmem", name);
}

// A /proc/self/status value in kB ("VmHWM", "VmRSS"); -1 if absent.
long status_kb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  return -1;
}

// Resets the peak RSS to the current RSS (Linux: "5" to clear_refs); false if not allowed.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

const char* kHeader =
    "JAVA PROFILE 1.0.1, created Mon Nov 23 07:25:44 2026\n\n"
    "THREAD START (obj=50000, id = 200001, name=\"main\", group=\"main\")\n";

constexpr uint64_t kInstances = 300000;

// Instances of Node (next, value) in a chain from a root; a long[4M] (32 MB of zeros in the
// binary dump) and a Node[2M] with three elements listed, one out of order.
void write_big_profile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(kHeader, f);
  std::fputs("HEAP DUMP BEGIN (1 objects, 16 bytes) Mon Nov 23 07:25:44 2026\n", f);
  std::fprintf(f, "ROOT %llx (kind=<unknown>)\n", 0x100000ull);
  for (uint64_t i = 0; i < kInstances; ++i) {
    const unsigned long long id = 0x100000 + 16 * i;
    std::fprintf(f, "OBJ %llx (sz=24, trace=300000, class=Node@30)\n", id);
    if (i + 1 < kInstances) std::fprintf(f, "\tnext\t\t%llx\n", id + 16);
    std::fprintf(f, "\tvalue\t\t%llx\n", 0x20000ull);
  }
  std::fputs("ARR 20000 (sz=32000000, trace=300000, nelems=4000000, elem type=long[])\n", f);
  std::fputs("ARR 20008 (sz=8000000, trace=300000, nelems=2000000, elem type=Node[]@50)\n", f);
  std::fputs("\t[5]\t\t100000\n\t[1999999]\t\t100010\n\t[2]\t\t100020\n", f);
  std::fputs("CLS 30 (name=Node, trace=300000)\n\tsuper\t\t70\n", f);
  std::fputs("CLS 50 (name=Node[], trace=300000)\n\tsuper\t\t70\n", f);
  std::fputs("CLS 70 (name=java.lang.Object, trace=300000)\n", f);
  std::fputs("HEAP DUMP END\n", f);
  ASSERT_EQ(std::fclose(f), 0);
}

TEST(TextHeapDumpMemory, PeakRssGrowthStaysSmallOnABigText) {
  const std::string path = temp_path("big.txt");
  write_big_profile(path);
  ASSERT_GT(std::filesystem::file_size(path), 20u << 20) << "the text must dwarf the bound";
  ASSERT_TRUE(reset_peak_rss()) << "cannot reset the peak RSS through /proc/self/clear_refs";
  const long before = status_kb("VmRSS");
  const std::string out = analysis::detail::convert_text_dump(path, false);
  const long peak = status_kb("VmHWM");
  ASSERT_GT(before, 0);
  const long growth_kb = peak - before;
  RecordProperty("peak_rss_growth_kb", std::to_string(growth_kb));
  // The text is ~45 MB and the binary dump ~60 MB; holding either, or the Node[2M]'s elements
  // (16 MB), would pass this bound several times over. Buffers: two of about 1 MiB.
  EXPECT_LT(growth_kb, 12 * 1024) << "peak RSS grew by " << growth_kb << " kB";

  // And the conversion is the dump the text describes.
  auto d = analysis::HeapDump::open(out, {.use_index_file = false});
  ::unlink(out.c_str());
  EXPECT_EQ(d->summary().instances, kInstances);
  const auto array = d->object_detail(0x20008, 0, 6);
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->length, 2000000u);
  EXPECT_EQ(array->elements[2].target, 0x100020u) << "listed out of order";
  EXPECT_EQ(array->elements[5].target, 0x100000u);
  EXPECT_EQ(array->elements[1].value, "null");
  const auto last = d->object_detail(0x20008, 1999999, 1);
  ASSERT_EQ(last->elements.size(), 1u);
  EXPECT_EQ(last->elements[0].target, 0x100010u);
  const auto longs = d->object(0x20000);
  ASSERT_TRUE(longs.has_value());
  EXPECT_EQ(longs->shallow_bytes, 16u + 8 * 4000000);
  const auto node = d->object_detail(0x100000);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->object.shallow_bytes, 24u);
  ASSERT_EQ(node->fields.size(), 2u);
  EXPECT_EQ(node->fields[0].target, 0x100010u);
  std::filesystem::remove(path);
}

std::string error_of(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  try {
    const std::string out = analysis::detail::convert_text_dump(path, false);
    ::unlink(out.c_str());
  } catch (const analysis::Error& e) {
    std::filesystem::remove(path);
    return e.what();
  }
  std::filesystem::remove(path);
  return "";
}

TEST(TextHeapDumpMemory, HostileLinesAreOneErrorWithoutGrowing) {
  const std::string begin = "HEAP DUMP BEGIN (1 objects, 16 bytes) Mon Nov 23 07:25:44 2026\n";
  const std::string end = "HEAP DUMP END\n";
  ASSERT_TRUE(reset_peak_rss());
  const long before = status_kb("VmRSS");
  // One 24 MB line, written in pieces: read through the 1 MiB line limit, never whole.
  const std::string long_path = temp_path("long-line.txt");
  {
    std::ofstream f(long_path, std::ios::binary);
    f << kHeader << begin << "OBJ 10 (sz=16, trace=1, class=A@20)\n\t";
    const std::string piece(1 << 20, 'x');
    for (int i = 0; i < 24; ++i) f << piece;
    f << "\t10\n" << end;
  }
  try {
    analysis::detail::convert_text_dump(long_path, false);
    ADD_FAILURE() << "a 24 MB line was accepted";
  } catch (const analysis::Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 6: line longer than"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(long_path);
  EXPECT_NE(error_of("huge-array.txt", std::string(kHeader) + begin +
                                           "ARR 10 (sz=1, trace=1, nelems=4294967295, elem "
                                           "type=long[])\n" +
                                           end)
                .find("array too large"),
            std::string::npos);
  EXPECT_NE(
      error_of("huge-object.txt",
               std::string(kHeader) + begin +
                   "OBJ 10 (sz=4000000000, trace=1, class=A@20)\nCLS 20 (name=A, trace=1)\n" + end)
          .find("larger than an instance can be"),
      std::string::npos);
  const long growth_kb = status_kb("VmHWM") - before;
  EXPECT_LT(growth_kb, 8 * 1024) << "peak RSS grew by " << growth_kb << " kB";
}

}  // namespace
