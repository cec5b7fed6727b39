// SPDX-License-Identifier: Apache-2.0
// HPROF's format=b heap dump to a file, without a JVM: a planted JVMPI level-2 dump (primitive
// arrays, some of them tracked by heap=sites with a known allocation trace, some not) goes
// through BinaryReport, which converts and writes it on its dump worker thread in chunks, and the
// file is read back by the formats reader: every array is there once, in order, with its own
// trace serial (the batched trace lookup) and its own bytes; the segments went around the page
// cache (directio=y).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "allocation_sites.h"
#include "binary_report.h"
#include "hprof_format.h"
#include "output.h"
#include "tables.h"

namespace hprof::agent {
namespace {

constexpr uint32_t kArrays = 3000;
constexpr uint32_t kInts = 2048;  // 8 KiB each: 24 MB in all, more than one 16 MiB segment

jobjectID id_of_array(uint32_t i) {
  // IDs as the runtime hands them out: consecutive multiples of 8; every third one is left out
  // of the table (an object allocated before tracking began).
  return reinterpret_cast<jobjectID>(static_cast<uintptr_t>(0x10000 + 8 * uint64_t{i}));
}
unsigned trace_of_array(uint32_t i) {
  return i % 3 == 2 ? 0u : 1000u + i % 7;
}
uint32_t value_of(uint32_t array, uint32_t k) {
  return array * 7919u + k;
}

void put_be(std::vector<char>& out, uint64_t v, int bytes) {
  for (int b = bytes - 1; b >= 0; --b) out.push_back(static_cast<char>(v >> (8 * b)));
}

TEST(BinaryHeapDump, AFileDumpConvertedOnTheWorkerReadsBackWholeWithItsTraces) {
  const std::string file = std::filesystem::temp_directory_path() /
                           ("hprof_heap_dump_writer_test." + std::to_string(getpid()) + ".hprof");
  Options options;
  options.binary = true;
  options.file = file;
  Output output;
  std::string error;
  ASSERT_TRUE(output.open(options, error)) << error;
  BinaryReport report;
  report.begin(output, options);

  AllocationSites sites;
  std::vector<char> dump;
  for (uint32_t i = 0; i < kArrays; ++i) {
    if (trace_of_array(i) != 0) {
      sites.on_alloc(id_of_array(i), SiteKey{JVMPI_INT, nullptr, trace_of_array(i)},
                     static_cast<jint>(kInts * 4));
    }
    dump.push_back(static_cast<char>(JVMPI_GC_PRIM_ARRAY_DUMP));
    const jobjectID id = id_of_array(i);
    const char* id_bytes = reinterpret_cast<const char*>(&id);
    dump.insert(dump.end(), id_bytes, id_bytes + sizeof id);
    put_be(dump, kInts, 4);
    dump.push_back(static_cast<char>(JVMPI_INT));
    for (uint32_t k = 0; k < kInts; ++k) put_be(dump, value_of(i, k), 4);
  }
  JVMPI_Event event{};
  event.event_type = JVMPI_EVENT_HEAP_DUMP;
  event.u.heap_dump.dump_level = JVMPI_DUMP_LEVEL_2;
  event.u.heap_dump.begin = dump.data();
  event.u.heap_dump.end = dump.data() + dump.size();
  ClassTable classes;
  ThreadTable threads;
  report.heap_dump(event, classes, threads, sites);
  const uint64_t direct_bytes = output.direct_bytes();
  output.close();
  ASSERT_FALSE(output.failed());

  Profile p;
  try {
    p = read_file(file);
  } catch (const std::exception& e) {
    FAIL() << "the dump does not read back: " << e.what();
  }
  std::filesystem::remove(file);
  // directio=y (the default): the segments went around the page cache, where the file system
  // takes O_DIRECT at all.
  const int probe = ::open(file.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (probe >= 0) {
    ::close(probe);
    std::filesystem::remove(file);
    EXPECT_GT(direct_bytes, uint64_t{16} << 20)
        << "the dump's segments were written through the page cache";
  }
  ASSERT_EQ(p.heap_dumps.size(), 1u);
  const HeapDump& d = p.heap_dumps[0];
  EXPECT_TRUE(d.complete);
  EXPECT_GE(d.segments, 2u) << "the dump should span segments";
  ASSERT_EQ(d.primitive_arrays.size(), kArrays);
  for (uint32_t i = 0; i < kArrays; ++i) {
    const PrimArrayDump& a = d.primitive_arrays[i];
    ASSERT_EQ(a.array_id, reinterpret_cast<uintptr_t>(id_of_array(i))) << "array " << i;
    EXPECT_EQ(a.trace_serial, trace_of_array(i)) << "array " << i;
    ASSERT_EQ(a.type, BasicType::kInt);
    ASSERT_EQ(a.length, kInts);
    for (uint32_t k = 0; k < kInts; k += 511) {
      ASSERT_EQ(a.element_bits(k), value_of(i, k)) << "array " << i << " element " << k;
    }
  }
}

}  // namespace
}  // namespace hprof::agent
