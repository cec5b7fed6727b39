// SPDX-License-Identifier: Apache-2.0
#include "heap_agent.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int opt_value(const char* options, const char* key, char* buf, size_t len) {
  if (options == NULL) return 0;
  const size_t klen = strlen(key);
  const char* p = options;
  while (*p != '\0') {
    const char* end = strchr(p, ',');
    if (end == NULL) end = p + strlen(p);
    if ((size_t)(end - p) > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
      size_t n = (size_t)(end - (p + klen + 1));
      if (n >= len) n = len - 1;
      memcpy(buf, p + klen + 1, n);
      buf[n] = '\0';
      return 1;
    }
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

JVMPI_Interface* get_jvmpi(JavaVM* vm) {
  void* p = NULL;
  if ((*vm)->GetEnv(vm, &p, JVMPI_VERSION_1_2) != JNI_OK &&
      (*vm)->GetEnv(vm, &p, JVMPI_VERSION_1) != JNI_OK) {
    return NULL;
  }
  return (JVMPI_Interface*)p;
}

/* ---- hash table ---- */

static uint64_t hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

void map_init(ptr_map* m, size_t capacity) {
  size_t c = 16;
  while (c < capacity) c <<= 1;
  m->keys = calloc(c, sizeof(uint64_t));
  m->values = calloc(c, sizeof(uint64_t));
  m->capacity = c;
  m->count = 0;
}

static void map_grow(ptr_map* m) {
  ptr_map bigger;
  map_init(&bigger, m->capacity * 2);
  for (size_t i = 0; i < m->capacity; i++) {
    if (m->keys[i] != 0) *map_slot(&bigger, m->keys[i]) = m->values[i];
  }
  free(m->keys);
  free(m->values);
  *m = bigger;
}

uint64_t* map_slot(ptr_map* m, uint64_t key) {
  if ((m->count + 1) * 2 > m->capacity) map_grow(m);
  size_t i = hash64(key) & (m->capacity - 1);
  while (m->keys[i] != 0 && m->keys[i] != key) i = (i + 1) & (m->capacity - 1);
  if (m->keys[i] == 0) {
    m->keys[i] = key;
    m->values[i] = 0;
    m->count++;
  }
  return &m->values[i];
}

uint64_t* map_find(const ptr_map* m, uint64_t key) {
  if (m->capacity == 0 || key == 0) return NULL;
  size_t i = hash64(key) & (m->capacity - 1);
  while (m->keys[i] != 0) {
    if (m->keys[i] == key) return &m->values[i];
    i = (i + 1) & (m->capacity - 1);
  }
  return NULL;
}

/* ---- defining-event tables ---- */

typedef struct {
  char* name;
  char* sig;
} field_t;

typedef struct {
  jobjectID id;
  char* name;
  int num_interfaces;
  int num_statics;
  field_t* statics;
  int num_instances;
  field_t* instances;
} class_t;

typedef struct {
  JNIEnv* env;
  char* name;
} thread_t;

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static class_t* classes;
static size_t class_count, class_cap;
static ptr_map class_index;  /* class id -> index + 1 */
static ptr_map method_names; /* method id -> char* "Class.method" */
static thread_t* threads;
static size_t thread_count, thread_cap;

void tables_init(void) {
  map_init(&class_index, 8192);
  map_init(&method_names, 65536);
}

static char* dup_or(const char* s, const char* fallback) {
  return strdup(s != NULL ? s : fallback);
}

static field_t* copy_fields(int n, const JVMPI_Field* f) {
  field_t* out = calloc((size_t)(n > 0 ? n : 1), sizeof(field_t));
  for (int i = 0; i < n; i++) {
    out[i].name = dup_or(f[i].field_name, "?");
    out[i].sig = dup_or(f[i].field_signature, "?");
  }
  return out;
}

void tables_add_class(const JVMPI_Event* ev) {
  const jobjectID id = ev->u.class_load.class_id;
  pthread_mutex_lock(&tables_lock);
  uint64_t* slot = map_slot(&class_index, PTR(id));
  class_t* c;
  if (*slot != 0) {
    c = &classes[*slot - 1]; /* announced again (requested): replace nothing */
    pthread_mutex_unlock(&tables_lock);
    return;
  }
  if (class_count == class_cap) {
    class_cap = class_cap == 0 ? 4096 : class_cap * 2;
    classes = realloc(classes, class_cap * sizeof(class_t));
  }
  c = &classes[class_count++];
  *slot = class_count;
  c->id = id;
  c->name = dup_or(ev->u.class_load.class_name, "?");
  for (char* p = c->name; *p; p++) {
    if (*p == ' ') *p = '_';
  }
  c->num_interfaces = ev->u.class_load.num_interfaces;
  c->num_statics = ev->u.class_load.num_static_fields;
  c->statics = copy_fields(c->num_statics, ev->u.class_load.statics);
  c->num_instances = ev->u.class_load.num_instance_fields;
  c->instances = copy_fields(c->num_instances, ev->u.class_load.instances);
  for (int i = 0; i < ev->u.class_load.num_methods; i++) {
    const JVMPI_Method* m = &ev->u.class_load.methods[i];
    const char* mname = m->method_name != NULL ? m->method_name : "?";
    size_t len = strlen(c->name) + strlen(mname) + 2;
    char* full = malloc(len);
    snprintf(full, len, "%s.%s", c->name, mname);
    uint64_t* ms = map_slot(&method_names, PTR(m->method_id));
    if (*ms == 0) {
      *ms = (uint64_t)(uintptr_t)full;
    } else {
      free(full);
    }
  }
  pthread_mutex_unlock(&tables_lock);
}

void tables_add_thread(JNIEnv* env, const char* name) {
  pthread_mutex_lock(&tables_lock);
  if (thread_count == thread_cap) {
    thread_cap = thread_cap == 0 ? 64 : thread_cap * 2;
    threads = realloc(threads, thread_cap * sizeof(thread_t));
  }
  threads[thread_count].env = env;
  threads[thread_count].name = dup_or(name, "?");
  thread_count++;
  pthread_mutex_unlock(&tables_lock);
}

const char* tables_class_name(jobjectID class_id) {
  const char* out = NULL;
  pthread_mutex_lock(&tables_lock);
  uint64_t* slot = map_find(&class_index, PTR(class_id));
  if (slot != NULL) out = classes[*slot - 1].name;
  pthread_mutex_unlock(&tables_lock);
  return out;
}

jobjectID tables_class_id(const char* name) {
  jobjectID out = NULL;
  pthread_mutex_lock(&tables_lock);
  for (size_t i = 0; i < class_count; i++) {
    if (strcmp(classes[i].name, name) == 0) {
      out = classes[i].id;
      break;
    }
  }
  pthread_mutex_unlock(&tables_lock);
  return out;
}

const char* tables_method_name(jmethodID method) {
  const char* out = "?";
  pthread_mutex_lock(&tables_lock);
  uint64_t* slot = map_find(&method_names, PTR(method));
  if (slot != NULL) out = (const char*)(uintptr_t)*slot;
  pthread_mutex_unlock(&tables_lock);
  return out;
}

void tables_write_classes(FILE* out) {
  pthread_mutex_lock(&tables_lock);
  for (size_t i = 0; i < class_count; i++) {
    const class_t* c = &classes[i];
    fprintf(out, "class 0x%llx %d %d %d %s\n", PTR(c->id), c->num_interfaces, c->num_statics,
            c->num_instances, c->name);
    for (int k = 0; k < c->num_statics; k++) {
      fprintf(out, "s %s %s\n", c->statics[k].name, c->statics[k].sig);
    }
    for (int k = 0; k < c->num_instances; k++) {
      fprintf(out, "f %s %s\n", c->instances[k].name, c->instances[k].sig);
    }
  }
  pthread_mutex_unlock(&tables_lock);
}

void tables_write_threads(FILE* out) {
  pthread_mutex_lock(&tables_lock);
  for (size_t i = 0; i < thread_count; i++) {
    fprintf(out, "thread 0x%llx %s\n", PTR(threads[i].env), threads[i].name);
  }
  pthread_mutex_unlock(&tables_lock);
}

void write_traces(FILE* out, int num_traces, const JVMPI_CallTrace* traces) {
  for (int t = 0; t < num_traces; t++) {
    fprintf(out, "trace 0x%llx %d\n", PTR(traces[t].env_id), traces[t].num_frames);
    for (int f = 0; f < traces[t].num_frames; f++) {
      const JVMPI_CallFrame* fr = &traces[t].frames[f];
      fprintf(out, "frame %d 0x%llx %d %s\n", f, PTR(fr->method_id), fr->lineno,
              tables_method_name(fr->method_id));
    }
  }
}

int write_bytes(const char* path, const void* data, size_t len) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return -1;
  const size_t n = len == 0 ? 0 : fwrite(data, 1, len, f);
  fclose(f);
  return n == len ? 0 : -1;
}

long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
