// SPDX-License-Identifier: Apache-2.0
// JDK 8's java.hprof.txt layout: the header, THREAD START/END lines, TRACE records, and the
// SITES, CPU SAMPLES and CPU TIME sections (docs/hprof-text-format.md).
#pragma once

#include <string>
#include <vector>

#include "allocation_sites.h"
#include "cost_table.h"
#include "options.h"
#include "tables.h"

namespace hprof::agent::text {

// "Mon Nov 23 07:00:00 2026\n", like C's ctime().
std::string now_ctime();

std::string header();
std::string thread_start(unsigned serial, jobjectID object, const std::string& name,
                         const std::string& group);
std::string thread_end(unsigned serial);

// "java.lang.String.indexOf(String.java:1234)" style frame text, without the leading tab.
std::string frame(const ClassTable& classes, const Frame& f, bool lineno);
// "class.method" of a trace's top frame, or "<empty trace>".
std::string top_method(const ClassTable& classes, const TraceInfo& trace);

std::string traces(const ClassTable& classes, const std::vector<TraceInfo>& traces,
                   const Options& options);

// `sample_bytes` > 0: the counts are estimates from allocations sampled about every that many
// bytes, and the header says so.
std::string sites(const ClassTable& classes, const std::vector<Site>& sites,
                  const SiteCounts& totals, double cutoff, bool by_allocated, int sample_bytes = 0);

// CPU SAMPLES (count) or CPU TIME (ms; counts are calls). `sampler_counts`, when not empty,
// follows the total in the BEGIN line's parentheses (", signals = ...": sampler_counts()).
std::string cpu_samples(const ClassTable& classes, const TraceTable& traces,
                        const std::vector<Cost>& costs, uint64_t total, double cutoff,
                        const std::string& sampler_counts = "");
std::string cpu_times(const ClassTable& classes, const TraceTable& traces,
                      const std::vector<Cost>& costs, uint64_t total_ns, double cutoff);

// cpu=old: "count callee caller time" lines, the old -prof format.
std::string cpu_old(const ClassTable& classes, const TraceTable& traces,
                    const std::vector<Cost>& costs);

// "int[]" and the like for a JVMPI primitive type code.
std::string primitive_array_name(jint type);

// The name a site prints for its class: "java.lang.String", "int[]", "java.lang.String[]".
std::string site_class_name(const ClassTable& classes, const SiteKey& key);

}  // namespace hprof::agent::text
