// SPDX-License-Identifier: Apache-2.0
#include "extension_interface.h"

#include "allocation_events.h"
#include "call_trace_locations.h"
#include "class_histogram.h"
#include "cpu_sampling.h"
#include "heap_dump.h"

namespace jvmpi {
namespace {

JVMPI_ExtInterface make_table() {
  JVMPI_ExtInterface t{};
  t.version = JVMPI_EXT_VERSION_1;
  t.size = static_cast<jint>(sizeof t);
  t.StartCpuSampling = cpu_sampling::start;
  t.StopCpuSampling = cpu_sampling::stop;
  t.DrainCpuSamples = cpu_sampling::drain;
  t.GetCpuSamplingStats = cpu_sampling::stats;
  t.CpuSamplingFailureName = cpu_sampling::failure_name;
  t.StartAllocationSampling = allocation_events::start_sampling;
  t.StopAllocationSampling = allocation_events::stop_sampling;
  t.StreamHeapDump = heap_dump::stream_heap_dump;
  t.GetCallTraceLocations = call_trace_locations::get_call_trace_locations;
  t.LineOfLocation = call_trace_locations::line_of_location;
  t.SetCpuSamplingOptions = cpu_sampling::set_options;
  t.SetCpuSamplingDepth = cpu_sampling::set_depth;
  t.ClassHistogram = class_histogram::class_histogram;
  return t;
}

}  // namespace

JVMPI_ExtInterface& extension_interface() {
  static JVMPI_ExtInterface table = make_table();
  return table;
}

}  // namespace jvmpi
