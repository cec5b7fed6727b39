// SPDX-License-Identifier: Apache-2.0
#include "agent_common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE* log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

int opt_value(const char* options, const char* key, char* buf, size_t len) {
  size_t key_len = strlen(key);
  const char* p = options;
  while (p != NULL && *p != '\0') {
    const char* end = strchr(p, ',');
    size_t item_len = end != NULL ? (size_t)(end - p) : strlen(p);
    if (item_len > key_len && strncmp(p, key, key_len) == 0 && p[key_len] == '=') {
      size_t value_len = item_len - key_len - 1;
      if (value_len >= len) value_len = len - 1;
      memcpy(buf, p + key_len + 1, value_len);
      buf[value_len] = '\0';
      return 1;
    }
    p = end != NULL ? end + 1 : NULL;
  }
  return 0;
}

int tl_open(const char* options) {
  char path[4096];
  if (!opt_value(options, "log", path, sizeof path)) {
    const char* env = getenv("JVMPI_TEST_LOG");
    if (env == NULL) return 0;
    snprintf(path, sizeof path, "%s", env);
  }
  log_file = fopen(path, "w");
  return log_file != NULL;
}

void tl_log(const char* fmt, ...) {
  va_list args;
  if (log_file == NULL) return;
  pthread_mutex_lock(&log_lock);
  va_start(args, fmt);
  vfprintf(log_file, fmt, args);
  va_end(args);
  fputc('\n', log_file);
  fflush(log_file);
  pthread_mutex_unlock(&log_lock);
}

long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- methods ---- */

#define METHOD_SLOTS 65536 /* power of two; a JDK boots with ~20000 methods */

struct method_entry {
  jmethodID id;
  char* name;
  int start, end;
};
static struct method_entry methods[METHOD_SLOTS];
static pthread_mutex_t methods_lock = PTHREAD_MUTEX_INITIALIZER;

static struct method_entry* method_slot(jmethodID id) {
  size_t h = ((size_t)id >> 3) * 2654435761u;
  for (size_t i = 0; i < METHOD_SLOTS; i++) {
    struct method_entry* e = &methods[(h + i) & (METHOD_SLOTS - 1)];
    if (e->id == id || e->id == NULL) return e;
  }
  return NULL;
}

void names_add_class(const JVMPI_Event* ev) {
  pthread_mutex_lock(&methods_lock);
  for (int i = 0; i < ev->u.class_load.num_methods; i++) {
    const JVMPI_Method* m = &ev->u.class_load.methods[i];
    struct method_entry* e = method_slot(m->method_id);
    if (e == NULL || e->id != NULL) continue;
    size_t len = strlen(ev->u.class_load.class_name) + strlen(m->method_name) + 2;
    e->name = malloc(len);
    if (e->name == NULL) break;
    snprintf(e->name, len, "%s.%s", ev->u.class_load.class_name, m->method_name);
    e->start = m->start_lineno;
    e->end = m->end_lineno;
    e->id = m->method_id;
  }
  pthread_mutex_unlock(&methods_lock);
}

const char* names_method(jmethodID id) {
  const char* name = NULL;
  pthread_mutex_lock(&methods_lock);
  struct method_entry* e = method_slot(id);
  if (e != NULL && e->id == id && id != NULL) name = e->name;
  pthread_mutex_unlock(&methods_lock);
  return name;
}

int names_method_lines(jmethodID id, int* start, int* end) {
  int found = 0;
  pthread_mutex_lock(&methods_lock);
  struct method_entry* e = method_slot(id);
  if (e != NULL && e->id == id && id != NULL) {
    *start = e->start;
    *end = e->end;
    found = 1;
  }
  pthread_mutex_unlock(&methods_lock);
  return found;
}

/* ---- threads ---- */

#define MAX_THREADS 512

struct thread_entry {
  JNIEnv* env;
  char name[128];
};
static struct thread_entry threads[MAX_THREADS];
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;

void threads_add(JNIEnv* env, const char* name) {
  pthread_mutex_lock(&threads_lock);
  struct thread_entry* free_slot = NULL;
  for (int i = 0; i < MAX_THREADS; i++) {
    if (threads[i].env == env) {
      free_slot = &threads[i];
      break;
    }
    if (threads[i].env == NULL && free_slot == NULL) free_slot = &threads[i];
  }
  if (free_slot != NULL) {
    free_slot->env = env;
    snprintf(free_slot->name, sizeof free_slot->name, "%s", name != NULL ? name : "(null)");
  }
  pthread_mutex_unlock(&threads_lock);
}

void threads_remove(JNIEnv* env) {
  pthread_mutex_lock(&threads_lock);
  for (int i = 0; i < MAX_THREADS; i++) {
    if (threads[i].env == env) threads[i].env = NULL;
  }
  pthread_mutex_unlock(&threads_lock);
}

void threads_name(JNIEnv* env, char* buf, size_t len) {
  snprintf(buf, len, "?");
  pthread_mutex_lock(&threads_lock);
  for (int i = 0; i < MAX_THREADS; i++) {
    if (env != NULL && threads[i].env == env) {
      snprintf(buf, len, "%s", threads[i].name);
      break;
    }
  }
  pthread_mutex_unlock(&threads_lock);
}

int threads_known(JNIEnv* env) {
  int known = 0;
  pthread_mutex_lock(&threads_lock);
  for (int i = 0; i < MAX_THREADS && !known; i++) known = env != NULL && threads[i].env == env;
  pthread_mutex_unlock(&threads_lock);
  return known;
}

JNIEnv* threads_find(const char* name) {
  JNIEnv* env = NULL;
  pthread_mutex_lock(&threads_lock);
  for (int i = 0; i < MAX_THREADS; i++) {
    if (threads[i].env != NULL && strcmp(threads[i].name, name) == 0) {
      env = threads[i].env;
      break;
    }
  }
  pthread_mutex_unlock(&threads_lock);
  return env;
}
