// SPDX-License-Identifier: Apache-2.0
/*
 * Heap-dump benchmark agent. The Java program (jvmpibench.HeapDumpBench) calls the native
 * dump(path): it resets the process's peak RSS (writes 5 to /proc/self/clear_refs), reads VmRSS,
 * requests a level-2 HEAP_DUMP, and in the handler notes the time and writes the buffer to `path`
 * (as a profiler would); then reads VmHWM (the peak during the dump) and VmRSS, and prints
 *   JVMPI_DUMP buffer_ms=<ms> write_ms=<ms> total_ms=<ms> bytes=<n> rss_before_kb=<kb>
 *              hwm_kb=<kb> rss_after_kb=<kb>
 */
#include <jni.h>
#include <jvmpi.h>
#include <jvmpi_ext.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static JVMPI_Interface* jvmpi;
static JavaVM* jvm;
static const char* out_path;
static double t_buffer, t_written;
static long long dump_bytes;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static long status_kb(const char* key) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long v = -1;
  const size_t n = strlen(key);
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, key, n) == 0 && line[n] == ':') {
      sscanf(line + n + 1, "%ld", &v);
      break;
    }
  }
  fclose(f);
  return v;
}

static void notify(JVMPI_Event* ev) {
  if ((ev->event_type & ~JVMPI_REQUESTED_EVENT) != JVMPI_EVENT_HEAP_DUMP) return;
  t_buffer = now_ms();
  dump_bytes = ev->u.heap_dump.end - ev->u.heap_dump.begin;
  FILE* f = fopen(out_path, "wb");
  if (f != NULL) {
    fwrite(ev->u.heap_dump.begin, 1, (size_t)dump_bytes, f);
    fclose(f);
  }
  t_written = now_ms();
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)options;
  (void)reserved;
  void* p = NULL;
  if ((*vm)->GetEnv(vm, &p, JVMPI_VERSION_1) != JNI_OK) return JNI_ERR;
  jvmpi = (JVMPI_Interface*)p;
  jvm = vm;
  jvmpi->NotifyEvent = notify;
  return JNI_OK;
}

JNIEXPORT void JNICALL Java_jvmpibench_HeapDumpBench_dump(JNIEnv* env, jclass cls, jstring path) {
  (void)cls;
  out_path = (*env)->GetStringUTFChars(env, path, NULL);
  FILE* clear = fopen("/proc/self/clear_refs", "w");
  if (clear != NULL) {
    fputs("5", clear); /* reset VmHWM to the current RSS */
    fclose(clear);
  }
  const long rss_before = status_kb("VmRSS");
  JVMPI_HeapDumpArg arg = {JVMPI_DUMP_LEVEL_2};
  const double t0 = now_ms();
  const jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
  const double t_end = now_ms();
  const long hwm = status_kb("VmHWM");
  const long rss_after = status_kb("VmRSS");
  printf(
      "JVMPI_DUMP rc=%d buffer_ms=%.0f write_ms=%.0f total_ms=%.0f bytes=%lld rss_before_kb=%ld "
      "hwm_kb=%ld rss_after_kb=%ld\n",
      rc, t_buffer - t0, t_written - t_buffer, t_end - t0, dump_bytes, rss_before, hwm, rss_after);
  fflush(stdout);
  (*env)->ReleaseStringUTFChars(env, path, out_path);
}

/* The same dump through the runtime's StreamHeapDump (jvmpi_ext.h), each chunk written to the
 * file as it arrives. Prints
 *   JVMPI_STREAM rc=<rc> total_ms=<ms> bytes=<n> chunks=<n> rss_before_kb=<kb> hwm_kb=<kb> */
static FILE* stream_file;
static long long stream_bytes, stream_chunks;

static jboolean JNICALL stream_chunk(void* arg, const char* begin, const char* end) {
  (void)arg;
  stream_bytes += end - begin;
  stream_chunks++;
  return fwrite(begin, 1, (size_t)(end - begin), stream_file) == (size_t)(end - begin) ? JNI_TRUE
                                                                                       : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_jvmpibench_HeapDumpBench_stream(JNIEnv* env, jclass cls, jstring path) {
  (void)cls;
  const char* file = (*env)->GetStringUTFChars(env, path, NULL);
  JVMPI_ExtInterface* ext = NULL;
  if ((*jvm)->GetEnv(jvm, (void**)&ext, JVMPI_EXT_VERSION_1) != JNI_OK ||
      !JVMPI_EXT_HAS(ext, StreamHeapDump)) {
    printf("JVMPI_STREAM rc=-1 (no StreamHeapDump)\n");
    fflush(stdout);
    (*env)->ReleaseStringUTFChars(env, path, file);
    return;
  }
  FILE* clear = fopen("/proc/self/clear_refs", "w");
  if (clear != NULL) {
    fputs("5", clear);
    fclose(clear);
  }
  const long rss_before = status_kb("VmRSS");
  stream_file = fopen(file, "wb");
  stream_bytes = stream_chunks = 0;
  JVMPIExt_HeapDumpSink sink = {NULL, NULL, stream_chunk, NULL};
  const double t0 = now_ms();
  const jint rc = stream_file != NULL ? ext->StreamHeapDump(JVMPI_DUMP_LEVEL_2, 0, &sink) : -1;
  if (stream_file != NULL) fclose(stream_file);
  const double t_end = now_ms();
  const long hwm = status_kb("VmHWM");
  printf("JVMPI_STREAM rc=%d total_ms=%.0f bytes=%lld chunks=%lld rss_before_kb=%ld hwm_kb=%ld\n",
         rc, t_end - t0, stream_bytes, stream_chunks, rss_before, hwm);
  fflush(stdout);
  (*env)->ReleaseStringUTFChars(env, path, file);
}
