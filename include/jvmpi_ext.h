// SPDX-License-Identifier: Apache-2.0
/*
 * jvmpi_ext.h: extensions of libjvmpi.so beyond JVMPI 1.2, in a table of their own so that
 * jvmpi.h (and the JVMPI_Interface layout) stays exactly as JDK 1.4.2 defined it.
 *
 * An agent asks for the table with the same GetEnv it uses for JVMPI:
 *
 *   JVMPI_ExtInterface* ext = NULL;
 *   if (vm->GetEnv((void**)&ext, JVMPI_EXT_VERSION_1) == JNI_OK) { ... }
 *
 * A VM or runtime without the extensions answers JNI_EVERSION, and the agent goes on without them.
 * The table only grows: later versions append entries and raise `size`, never move or remove one.
 * Before calling an entry added after version 1, check JVMPI_EXT_HAS(ext, Entry).
 * See docs/jvmpi-extensions.md.
 */
#ifndef JVMPI_EXT_H_INCLUDED
#define JVMPI_EXT_H_INCLUDED

#include <stddef.h>

#include "jvmpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For JavaVM->GetEnv. In JVMPI's range of versions (0x1000xxxx), away from JVMPI's own. */
#define JVMPI_EXT_VERSION_1 ((jint)0x10001001)

/* Whether the table the runtime handed out has entry `member`. */
#define JVMPI_EXT_HAS(ext, member) \
  ((size_t)(ext)->size >= offsetof(JVMPI_ExtInterface, member) + sizeof((ext)->member))

/* ---- CPU-time sampling ----
 * Why a signal found no stack to record. The first eleven are the codes HotSpot's
 * AsyncGetCallTrace stores in num_frames (negated: kind k is code -k; kind 0 is a thread running
 * no Java code); the rest are the runtime's own. */
#define JVMPI_EXT_FAIL_NO_JAVA_FRAME 0    /* the thread ran only native or VM code */
#define JVMPI_EXT_FAIL_NO_CLASS_LOAD 1    /* class load events were off (runtime bug) */
#define JVMPI_EXT_FAIL_GC_ACTIVE 2        /* a collection was moving things */
#define JVMPI_EXT_FAIL_UNKNOWN_NOT_JAVA 3 /* in the VM, state not walkable */
#define JVMPI_EXT_FAIL_NOT_WALKABLE_NOT_JAVA 4
#define JVMPI_EXT_FAIL_UNKNOWN_JAVA 5      /* in Java code the walker did not recognize */
#define JVMPI_EXT_FAIL_NOT_WALKABLE_JAVA 6 /* in Java code, frame not walkable yet */
#define JVMPI_EXT_FAIL_UNKNOWN_STATE 7
#define JVMPI_EXT_FAIL_THREAD_EXIT 8  /* the thread was ending */
#define JVMPI_EXT_FAIL_DEOPT 9        /* in deoptimization */
#define JVMPI_EXT_FAIL_SAFEPOINT 10   /* at a safepoint */
#define JVMPI_EXT_FAIL_OTHER_CODE 11  /* a code this list does not name */
#define JVMPI_EXT_FAIL_NO_ENV 12      /* signal on a thread not attached to the VM */
#define JVMPI_EXT_FAIL_BUFFER_FULL 13 /* stack taken, but no room left: dropped */
#define JVMPI_EXT_FAIL_KINDS 14

/* The kind of per-thread CPU-time timer in use (JVMPIExt_CpuSamplingStats.timer). */
#define JVMPI_EXT_TIMER_NONE 0 /* sampling never started */
/* perf event on the thread's task clock, user mode: a signal every interval of CPU time; time in
 * the kernel is carried by the thread's next signal */
#define JVMPI_EXT_TIMER_PERF 1
#define JVMPI_EXT_TIMER_POSIX 2 /* POSIX CPU-clock timer: fires at the kernel's tick */
/* As JVMPI_EXT_TIMER_PERF, kernel mode included (JVMPI_SAMPLER_TIMER=perf_kernel) */
#define JVMPI_EXT_TIMER_PERF_KERNEL 3

typedef struct {
  jlong signals;       /* timer signals handled while sampling was on */
  jlong samples_taken; /* signals that recorded a stack */
  jlong samples_delivered;
  jlong threads_armed;                  /* threads whose CPU timer was set up, in total */
  jlong arm_failures;                   /* threads whose timer could not be created */
  jlong failures[JVMPI_EXT_FAIL_KINDS]; /* signals that recorded nothing, by kind */
  /* Appended later: pass sizeof to GetCpuSamplingStats, and an older runtime leaves them. */
  jlong timer;           /* JVMPI_EXT_TIMER_* */
  jlong posix_fallbacks; /* threads given a POSIX timer because their perf event was refused */
  /* Appended later. samples_taken counts these too: signals whose first walk failed (the thread
   * was in an intrinsic's stub, a compiled method's prologue, ...) and whose Java stack was then
   * found from the stub's caller; recovered_kinds[k] counts those whose first walk failed with
   * kind k. failures[] counts only what stayed unwalked (delivered as unwalkable samples with
   * JVMPI_EXT_CPU_UNWALKABLE_SAMPLES, else dropped; NO_ENV and BUFFER_FULL are always lost). */
  jlong recovered;
  jlong recovered_kinds[JVMPI_EXT_FAIL_KINDS];
} JVMPIExt_CpuSamplingStats;

/* Options of SetCpuSamplingOptions. */
/* Deliver the signals that found no Java stack as well, so that an agent can count them: such a
 * sample has trace.num_frames == 0 and one frame, frames[0] = {lineno: its JVMPI_EXT_FAIL_* kind,
 * method_id: NULL}. Without it they are only counted (failures[]). */
#define JVMPI_EXT_CPU_UNWALKABLE_SAMPLES 0x1

/* One sample: the stack of thread trace.env_id where it was when it had used `cpu_time`
 * nanoseconds of CPU since its previous sample (the interval, times the expiries that one signal
 * stood for). Frames are callee first with source lines, as GetCallTrace reports them. A sample
 * taken while a virtual thread was mounted carries the carrier's env_id and the virtual thread's
 * frames. */
typedef struct {
  JVMPI_CallTrace trace;
  jlong cpu_time;
} JVMPIExt_CpuSample;

/* Called by DrainCpuSamples, on the draining thread, with samples it may read until it returns. */
typedef void(JNICALL* JVMPIExt_CpuSampleHandler)(void* arg, const JVMPIExt_CpuSample* samples,
                                                 jint count);

/* ---- Sampled allocations ----
 * One allocation in about every `interval` bytes a thread allocates (JVMTI's SampledObjectAlloc:
 * the sampling points are drawn at random, so each byte is equally likely to be picked). `event`
 * is an OBJECT_ALLOC event as JVMPI delivers it (env_id, arena, class, is_array, size, obj_id;
 * the object is tagged, so OBJECT_FREE will name it when it dies). The weights are unbiased
 * estimates of what the sample stands for: an object of `size` bytes is picked with probability
 * p = 1 - exp(-size / interval), so weight_objects = 1 / p and weight_bytes = size / p. */
typedef struct {
  JVMPI_Event event;
  jlong weight_bytes;
  jlong weight_objects;
} JVMPIExt_AllocSample;

/* Called on the allocating thread, like a JVMPI event (GetCallTrace(env_id) gives the site). */
typedef void(JNICALL* JVMPIExt_AllocSampleHandler)(void* arg, const JVMPIExt_AllocSample* sample);

/* ---- Streamed heap dump ----
 * What a streamed dump may name as an instance's class, with its superclass (the instance records'
 * values are the class's own fields first, then its superclass's, ...), before any record that
 * names it. instance_size is the runtime's estimate of an instance's size in the heap. */
typedef struct {
  jobjectID class_id;
  jobjectID super_id;
  jint instance_size;
} JVMPIExt_DumpClass;

/* Where StreamHeapDump sends the dump, in this order: classes (once before the first chunk, and
 * again before the records of classes learnt while the dump was taken), chunk (many), finished
 * (once, if the dump completed). classes and finished are called on the requesting thread. chunk
 * is called while the VM is stopped for the heap walk, on the VM's own thread that runs the walk
 * (HotSpot runs JVMTI heap walks there) while the requesting thread waits for it, or on the
 * requesting thread for the records written after the walk: it may write to files and sockets,
 * but must not call JNI, JVMPI or JVMTI, nor take a lock the requesting thread holds, nor wait for
 * a Java thread. Returning JNI_FALSE ends the dump (finished is not called). */
typedef struct {
  void* arg;
  void(JNICALL* classes)(void* arg, const JVMPIExt_DumpClass* classes, jint count);
  jboolean(JNICALL* chunk)(void* arg, const char* begin, const char* end);
  void(JNICALL* finished)(void* arg, jint num_traces, JVMPI_CallTrace* traces);
} JVMPIExt_HeapDumpSink;

/* One entry of ClassHistogram: the live objects of one class, named as OBJECT_ALLOC names an
 * object's class (is_array JVMPI_NORMAL_OBJECT with the class, JVMPI_CLASS with the element class
 * of a reference array, or a primitive element type with no class). */
typedef struct {
  jint is_array;
  jobjectID class_id;
  jlong instances;
  jlong bytes;
} JVMPIExt_ClassCount;

typedef void(JNICALL* JVMPIExt_ClassCountHandler)(void* arg, const JVMPIExt_ClassCount* counts,
                                                  jint count);

typedef struct JVMPI_ExtInterface {
  jint version; /* JVMPI_EXT_VERSION_1 */
  jint size;    /* sizeof the table as the runtime built it */

  /* Arms a CPU-time timer for every live Java thread and every one that starts later, firing every
   * `interval_ns` of the thread's own CPU time; each firing records the thread's Java stack (at
   * most `max_depth` frames, up to 128) into a fixed buffer. Call at or after JVM_INIT_DONE.
   * JVMPI_SUCCESS; JVMPI_NOT_AVAILABLE if this VM cannot (no AsyncGetCallTrace, SIGPROF taken by
   * someone else, before VM init); JVMPI_FAIL on bad arguments or if sampling is already on. */
  jint(JNICALL* StartCpuSampling)(jlong interval_ns, jint max_depth);
  /* Deletes every timer; samples already recorded stay to be drained. Safe to call twice. The
   * runtime also stops sampling at VM death, before JVM_SHUT_DOWN reaches the agent. */
  jint(JNICALL* StopCpuSampling)(void);
  /* Hands the recorded samples to `handler` in batches, on the calling thread (any thread the
   * agent chooses, never a signal handler), resolving lines first. Returns how many. */
  jint(JNICALL* DrainCpuSamples)(JVMPIExt_CpuSampleHandler handler, void* arg);
  /* Copies min(size, sizeof) bytes of the counters into `stats`. */
  jint(JNICALL* GetCpuSamplingStats)(JVMPIExt_CpuSamplingStats* stats, jint size);
  /* A short name for a failure kind ("gc_active", ...), or NULL. */
  const char*(JNICALL* CpuSamplingFailureName)(jint kind);

  /* Starts sampled allocations at a mean of `interval_bytes` (1 KiB to 1 GiB; JVMTI's default is
   * 512 KiB), calling `handler(arg, sample)` for each. Works alongside exact OBJECT_ALLOC: while
   * that is enabled every allocation reaches the runtime anyway, and it picks the samples itself
   * with the same statistics. JVMPI_SUCCESS, JVMPI_NOT_AVAILABLE (no SampledObjectAlloc in this
   * VM) or JVMPI_FAIL (bad arguments). Calling it again changes interval and handler. */
  jint(JNICALL* StartAllocationSampling)(jint interval_bytes, JVMPIExt_AllocSampleHandler handler,
                                         void* arg);
  /* Stops them; no handler call starts after it returns. */
  jint(JNICALL* StopAllocationSampling)(void);

  /* Added after version 1: check JVMPI_EXT_HAS(ext, StreamHeapDump).
   * Call it on a thread attached to the VM, as RequestEvent.
   * The heap dump of RequestEvent(HEAP_DUMP) at `level` (JVMPI_DUMP_LEVEL_0/1/2), the same records
   * in the same order, handed to `sink` in chunks of whole records of about `chunk_bytes` (64 KiB
   * to 256 MiB; 0 means 4 MiB; a record larger than that comes alone in a chunk of its size) as
   * the heap is walked, so the runtime never holds more than one chunk. JVMPI_SUCCESS;
   * JVMPI_FAIL on bad arguments, when the walk failed or the sink stopped it. */
  jint(JNICALL* StreamHeapDump)(jint level, jint chunk_bytes, const JVMPIExt_HeapDumpSink* sink);

  /* Added after version 1: check JVMPI_EXT_HAS(ext, LineOfLocation) (it comes with
   * GetCallTraceLocations).
   * GetCallTrace of the calling thread (trace->env_id must be its own JNIEnv, else no frames),
   * with each frame's `lineno` holding the frame's bytecode index instead of its source line (-1
   * for a native method). Finding a line costs a table lookup per frame; an agent that only tells
   * stacks apart (an allocation-site profiler, once per allocation) keys on indexes and asks
   * LineOfLocation once per stack it has not seen. */
  void(JNICALL* GetCallTraceLocations)(JVMPI_CallTrace* trace, jint depth);
  /* The source line of bytecode index `location` in `method`, as GetCallTrace reports it: -3 for
   * a native method (location -1), -1 when the class has no line table. */
  jint(JNICALL* LineOfLocation)(jmethodID method, jint location);

  /* Added after version 1: check JVMPI_EXT_HAS(ext, SetCpuSamplingOptions) (it comes with
   * SetCpuSamplingDepth).
   * JVMPI_EXT_CPU_* options of the CPU-time sampler, for the samples drained from now on (call it
   * before StartCpuSampling to have them from the first). JVMPI_SUCCESS; JVMPI_FAIL for an unknown
   * bit. */
  jint(JNICALL* SetCpuSamplingOptions)(jint options);
  /* Changes the depth of the stacks the sampler records (1 to 128), for the signals from now on,
   * whether sampling is on or not. JVMPI_SUCCESS; JVMPI_FAIL for a bad depth. */
  jint(JNICALL* SetCpuSamplingDepth)(jint max_depth);

  /* Added after version 1: check JVMPI_EXT_HAS(ext, ClassHistogram).
   * The live objects of every class, counted as `jcmd PID GC.class_histogram` counts them: after
   * a full collection (JVMTI ForceGarbageCollection), one walk of the heap (IterateThroughHeap)
   * counts instances and bytes per class. Objects need no object ID for it and get none. Calls
   * handler(arg, counts, count) once, on the calling thread (a thread attached to the VM, in the
   * live phase), with one entry per class that has instances. For an agent that starts in a
   * running VM and wants what was allocated before it (HPROF's "allocated before profiling"
   * site). JVMPI_SUCCESS; JVMPI_FAIL when the walk fails or the thread cannot make one. */
  jint(JNICALL* ClassHistogram)(JVMPIExt_ClassCountHandler handler, void* arg);
} JVMPI_ExtInterface;

#ifdef __cplusplus
}
#endif

#endif /* JVMPI_EXT_H_INCLUDED */
