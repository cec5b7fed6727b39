// SPDX-License-Identifier: Apache-2.0
/*
 * Helpers shared by the heap-test agents: option parsing, a pointer-keyed hash table, and the
 * tables a JVMPI agent keeps from its defining events (CLASS_LOAD: class names, interface counts,
 * field lists, method names; THREAD_START: thread names), plus writers for the text files the tests
 * read next to the raw dump buffers.
 *
 * Text file lines (pointers as 0x<hex>, names last because thread names contain spaces):
 *   class <id> <num_interfaces> <num_statics> <num_instances> <name>
 *   s <field name> <signature>          (the class's statics, in CLASS_LOAD order)
 *   f <field name> <signature>          (the class's instance fields, in CLASS_LOAD order)
 *   thread <env> <name>
 *   trace <env> <num_frames>
 *   frame <index> <method id> <line> <Class.method>
 */
#ifndef JVMPIHEAP_AGENT_H
#define JVMPIHEAP_AGENT_H

#include <jvmpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PTR(p) ((unsigned long long)(uintptr_t)(p))

/* Copies the value of key=value from comma-separated options into buf; 1 if present. */
int opt_value(const char* options, const char* key, char* buf, size_t len);

/* Gets the JVMPI interface (version 1.2, else 1) from the VM; NULL on failure. */
JVMPI_Interface* get_jvmpi(JavaVM* vm);

/* ---- pointer-keyed hash table: key 0 is reserved, entries are never removed ---- */
typedef struct {
  uint64_t* keys;
  uint64_t* values;
  size_t capacity; /* a power of two */
  size_t count;
} ptr_map;

void map_init(ptr_map* m, size_t capacity);
/* The slot of key (inserting it with value 0 if absent). */
uint64_t* map_slot(ptr_map* m, uint64_t key);
/* The value pointer, or NULL when absent. */
uint64_t* map_find(const ptr_map* m, uint64_t key);

/* ---- defining-event tables (internally locked) ---- */
void tables_init(void);
void tables_add_class(const JVMPI_Event* ev); /* from CLASS_LOAD (requested or not) */
void tables_add_thread(JNIEnv* env, const char* name);
/* Class name of a class ID, or NULL. The string stays valid. */
const char* tables_class_name(jobjectID class_id);
/* Class ID of a class name, or NULL. */
jobjectID tables_class_id(const char* name);
/* "Class.method" for a method ID, or "?". */
const char* tables_method_name(jmethodID method);

void tables_write_classes(FILE* out);
void tables_write_threads(FILE* out);
void write_traces(FILE* out, int num_traces, const JVMPI_CallTrace* traces);

/* Writes len bytes to path; 0 on success. */
int write_bytes(const char* path, const void* data, size_t len);

/* Monotonic milliseconds. */
long long now_ms(void);

#endif
