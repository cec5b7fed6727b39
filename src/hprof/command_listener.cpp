// SPDX-License-Identifier: Apache-2.0
#include "command_listener.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "jvmpi_client.h"
#include "profile.h"
#include "reports.h"

namespace hprof::agent {
namespace {

enum Command : uint8_t {
  kGc = 0x01,
  kDumpHeap = 0x02,
  kAllocSites = 0x03,
  kHeapSummary = 0x04,
  kExit = 0x05,
  kDumpTraces = 0x06,
  kCpuSamples = 0x07,
  kControl = 0x08,
  // Not in JDK 8's protocol: MONITOR TIME and MONITOR DUMP on demand (monitor=y), announced in
  // the SETTINGS report's `commands=` so that a front end never sends it to an agent without it.
  kMonitorDump = 0x09,
};

// What the CONTROL commands switched (the listener is the only thread that changes them).
bool g_sampling_on = true;
int g_tracking = -1;  // -1: as the options started it (heap=sites|dump|all)
std::atomic<bool> g_listener_running{false};

const char* cpu_name(CpuMode m) {
  switch (m) {
    case CpuMode::kSamples:
      return "samples";
    case CpuMode::kTimes:
      return "times";
    case CpuMode::kOld:
      return "old";
    case CpuMode::kOff:
      break;
  }
  return "off";
}

// The agent's settings as they are now, after the command with `serial` (0: at start), so the
// front end shows what the agent uses rather than what it asked for. format=a: a SETTINGS line;
// format=b: the same text as a SETTINGS note record (docs/jvmprof-serve.md).
void write_settings(uint32_t serial) {
  Profile& p = profile();
  const Options& o = p.options;
  const char* heap = o.heap_dump && o.alloc_sites ? "all"
                     : o.heap_dump                ? "dump"
                     : o.alloc_sites              ? "sites"
                                                  : "off";
  char line[512];
  std::snprintf(line, sizeof line,
                "SETTINGS: serial=%u depth=%d cpu=%s sampling=%s sampler=%s interval=%d heap=%s "
                "tracking=%s sample=%d monitor=%s thread=%s cutoff=%g format=%s commands=%s",
                serial, o.depth, cpu_name(o.cpu), g_sampling_on ? "on" : "off",
                o.sampler == SamplerKind::kCpuTime ? "cputime" : "suspend", o.interval_ms, heap,
                (g_tracking < 0 ? o.object_tracking() : g_tracking == 1) ? "on" : "off",
                o.sample_bytes, o.monitor ? "y" : "n", o.thread_in_traces ? "y" : "n", o.cutoff,
                o.binary ? "b" : "a", o.monitor && !o.binary ? "monitor-dump" : "none");
  std::lock_guard section(p.output.section_mutex());
  if (o.binary) {
    p.binary.settings_note(line);
    p.binary.flush();
  } else {
    std::strncat(line, "\n", sizeof line - std::strlen(line) - 1);
    p.output.write(line);
    p.output.flush();
  }
}

bool read_fully(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool read_u2(int fd, uint16_t& v) {
  if (!read_fully(fd, &v, 2)) return false;
  v = ntohs(v);
  return true;
}

bool read_u4(int fd, uint32_t& v) {
  if (!read_fully(fd, &v, 4)) return false;
  v = ntohl(v);
  return true;
}

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool control(int fd) {
  Profile& p = profile();
  uint16_t sub = 0;
  if (!read_u2(fd, sub)) return false;
  switch (sub) {
    case 1:  // object tracking on
      jvmpi()->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, nullptr);
      jvmpi()->EnableEvent(JVMPI_EVENT_OBJECT_FREE, nullptr);
      g_tracking = 1;
      return true;
    case 2:  // object tracking off (frees of tracked objects still count)
      jvmpi()->DisableEvent(JVMPI_EVENT_OBJECT_ALLOC, nullptr);
      g_tracking = 0;
      return true;
    case 3:    // sampling on; the thread id (host order, as JDK 8 read it) is 0 for all
    case 4: {  // sampling off
      uint32_t thread = 0;
      if (!read_fully(fd, &thread, 4)) return false;
      p.sampler.set_enabled(sub == 3);
      g_sampling_on = sub == 3;
      return true;
    }
    case 5:
      p.cpu_samples.clear();
      p.timer.clear();
      return true;
    case 6:  // JDK 8's meaning: allocated counts restart from what is live (live stays)
      p.sites.clear_counts();
      return true;
    case 7: {
      uint16_t depth = 0;
      if (!read_u2(fd, depth)) return false;
      p.options.depth = depth;
      p.sampler.depth_changed();
      return true;
    }
    default:
      std::fprintf(stderr, "hprof: error: unknown CONTROL command %u from the front end\n", sub);
      return false;
  }
}

// Serves one connection's commands: true when the connection ended (the front end closed it),
// false when the listener should stop (exit, or a command it does not know).
bool serve_commands(int fd) {
  Profile& p = profile();
  for (;;) {
    uint8_t tag = 0;
    uint32_t serial = 0;
    uint32_t length = 0;
    if (!read_fully(fd, &tag, 1)) return true;  // the front end closed the connection
    if (!read_u4(fd, serial) || !read_u4(fd, length)) return true;
    switch (tag) {
      case kGc:
        jvmpi()->RunGC();
        break;
      case kDumpHeap: {
        std::lock_guard section(p.output.section_mutex());
        write_pending_traces();
        write_heap_dump();
        write_pending_traces();
        p.output.flush();
        break;
      }
      case kAllocSites: {
        uint16_t flags = 0;
        uint32_t cutoff = 0;
        if (!read_u2(fd, flags) || !read_u4(fd, cutoff)) return true;
        if ((flags & 0x4) != 0) jvmpi()->RunGC();
        std::lock_guard section(p.output.section_mutex());
        write_pending_traces();
        write_sites_report((flags & 0x2) != 0, as_float(cutoff));
        p.output.flush();
        break;
      }
      case kHeapSummary:  // a binary-only record; the text report has no heap summary
        if (p.options.binary) {
          p.binary.heap_summary(p.sites.totals());
          p.binary.flush();
        }
        break;
      case kExit:
        jvmpi()->ProfilerExit(0);
        return false;
      case kDumpTraces: {
        std::lock_guard section(p.output.section_mutex());
        write_pending_traces();
        p.output.flush();
        break;
      }
      case kCpuSamples: {
        uint16_t ignored = 0;
        uint32_t cutoff = 0;
        if (!read_u2(fd, ignored) || !read_u4(fd, cutoff)) return true;
        std::lock_guard section(p.output.section_mutex());
        write_pending_traces();
        write_cpu_report(as_float(cutoff));
        p.output.flush();
        break;
      }
      case kControl:
        if (!control(fd)) return true;
        write_settings(serial);
        break;
      case kMonitorDump:
        if (p.options.monitor && !p.options.binary) {
          std::lock_guard section(p.output.section_mutex());
          write_monitor_report();
          p.output.flush();
        }
        break;
      default:
        // JDK 8 ended the VM here; a front end's mistake should not kill the program.
        std::fprintf(stderr,
                     "hprof: error: unknown command 0x%02x from the front end; no longer "
                     "listening\n",
                     tag);
        return false;
    }
  }
}

void serve_connections() {
  Profile& p = profile();
  int fd = p.output.socket();
  // A collector not reached at start (period=): commands once it is.
  if (fd < 0) fd = p.output.next_connection(-1);
  while (fd >= 0) {
    write_settings(0);
    if (!serve_commands(fd)) return;
    // With period= the output reconnects; commands are served on each new connection, once its
    // hello has been written.
    if (!p.output.connection_lost(fd)) return;
    fd = p.output.next_connection(fd);
    if (fd < 0) return;
  }
}

void listener_main(void*) {
  serve_connections();
  g_listener_running.store(false);  // a detach waits for this (wait_for_command_listener_end)
}

}  // namespace

bool start_command_listener() {
  if (!profile().output.net()) return true;
  g_sampling_on = true;  // a new session (attach) starts as its options say
  g_tracking = -1;
  g_listener_running.store(true);
  if (jvmpi()->CreateSystemThread(const_cast<char*>(kListenerThreadName), JVMPI_NORMAL_PRIORITY,
                                  listener_main) == JNI_OK) {
    return true;
  }
  g_listener_running.store(false);
  return false;
}

bool wait_for_command_listener_end() {
  // The front end closes its end once it has read the report's end; the listener then returns.
  for (int i = 0; i < 5000 && g_listener_running.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return !g_listener_running.load();
}

}  // namespace hprof::agent
