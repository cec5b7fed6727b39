// SPDX-License-Identifier: Apache-2.0
/*
 * Shared helpers of the conformance agents: the log file the tests read, option parsing, and
 * the id-to-name tables an agent keeps from CLASS_LOAD and THREAD_START (as real agents did).
 *
 * Log format: one line per fact, "TAG<TAB>key=value<TAB>key=value...". Pointers are written as
 * 0x<hex> (0x0 for NULL) so the tests can compare them with what the Java side prints.
 */
#ifndef JVMPITEST_AGENT_COMMON_H
#define JVMPITEST_AGENT_COMMON_H

#include <jvmpi.h>
#include <stddef.h>
#include <stdint.h>

#define PTR(p) ((unsigned long long)(uintptr_t)(p))

/* Opens the log named by "log=<path>" in the comma-separated options, else by $JVMPI_TEST_LOG. */
int tl_open(const char* options);
/* Writes one line (a newline is added) and flushes it, so a crash still leaves what was seen. */
void tl_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copies the value of key=value from comma-separated options into buf; 1 if present. */
int opt_value(const char* options, const char* key, char* buf, size_t len);

/* Method IDs to "Class.method" from CLASS_LOAD events (requested or not). */
void names_add_class(const JVMPI_Event* ev);
/* The name, or NULL; the string stays valid. */
const char* names_method(jmethodID id);
/* Start/end line of a method from its CLASS_LOAD data; 0 if unknown. */
int names_method_lines(jmethodID id, int* start, int* end);

/* Thread envs to names, from THREAD_START; removed at THREAD_END. */
void threads_add(JNIEnv* env, const char* name);
void threads_remove(JNIEnv* env);
/* Copies the name into buf ("?" when unknown). */
void threads_name(JNIEnv* env, char* buf, size_t len);
/* Whether a THREAD_START named this env and no THREAD_END followed. */
int threads_known(JNIEnv* env);
/* The env of the live thread with this name, or NULL. */
JNIEnv* threads_find(const char* name);

/* Monotonic milliseconds, for bounded waits. */
long long now_ms(void);

#endif
