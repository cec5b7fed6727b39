// SPDX-License-Identifier: Apache-2.0
/*
 * INSTRUCTION_START for the methods of jvmpitest.InstructionProgram, on the thread
 * "jvmpitest-caller". Like a coverage tool of the time, the agent keeps the class's original
 * bytes (CLASS_LOAD_HOOK) and decodes the methods' bytecode, so it knows which instruction each
 * event names: it checks that every offset is an instruction boundary of the original code and
 * logs the if/tableswitch/lookupswitch details next to what the bytecode says.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

#define CLASS "jvmpitest/InstructionProgram"
#define MAX_CODE 4096

static JVMPI_Interface* jvmpi;
static JNIEnv* volatile caller;

struct method_code {
  char name[32];
  unsigned char code[MAX_CODE];
  uint32_t length;
  unsigned char boundary[MAX_CODE]; /* 1 where an instruction starts */
  jmethodID id;
  long events, offset0, bad_offsets;
};
static struct method_code methods[8];
static int method_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t be2(const unsigned char* p) {
  return ((uint32_t)p[0] << 8) | p[1];
}
static int32_t be4(const unsigned char* p) {
  return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* Length of the instruction at pc (0 if unknown). */
static uint32_t insn_length(const unsigned char* code, uint32_t pc, uint32_t len) {
  unsigned op = code[pc];
  if (op == 0xaa || op == 0xab) { /* tableswitch, lookupswitch: padded to 4 */
    uint32_t p = (pc + 4) & ~3u;
    if (p + 12 > len) return 0;
    if (op == 0xaa) return p - pc + 12 + 4 * (uint32_t)(be4(code + p + 8) - be4(code + p + 4) + 1);
    return p - pc + 8 + 8 * (uint32_t)be4(code + p + 4);
  }
  if (op == 0xc4) return code[pc + 1] == 0x84 ? 6 : 4; /* wide */
  /* Instruction lengths by opcode; 0: variable (switches, wide) or undefined. */
  // clang-format off
  static const unsigned char lengths[256] = {
      /* 0x00 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x10 */ 2, 3, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
      /* 0x20 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x30 */ 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,
      /* 0x40 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x50 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x60 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x80 */ 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      /* 0x90 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3,
      /* 0xa0 */ 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 0, 0, 1, 1, 1, 1,
      /* 0xb0 */ 1, 1, 3, 3, 3, 3, 3, 3, 3, 5, 5, 3, 2, 3, 1, 1,
      /* 0xc0 */ 3, 3, 1, 1, 0, 4, 3, 3, 5, 5, 1, 0, 0, 0, 0, 0,
      /* 0xd0 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  };
  // clang-format on
  return lengths[op];
}

/* Records the Code of every method of the class, from its original class file. */
static int parse_class(const unsigned char* b, jint len) {
  const unsigned char* p = b + 8;
  const unsigned char* end = b + len;
  uint32_t cp_count = be2(p);
  const unsigned char** utf8 = calloc(cp_count, sizeof *utf8);
  uint32_t* class_name = calloc(cp_count, sizeof *class_name);
  if (utf8 == NULL || class_name == NULL) {
    free(utf8);
    free(class_name);
    return 0;
  }
  p += 2;
  for (uint32_t i = 1; i < cp_count && p < end; i++) {
    unsigned tag = *p++;
    switch (tag) {
      case 1:
        utf8[i] = p;
        p += 2 + be2(p);
        break;
      case 3:
      case 4:
      case 9:
      case 10:
      case 11:
      case 12:
      case 17:
      case 18:
        p += 4;
        break;
      case 5:
      case 6:
        p += 8;
        i++;
        break;
      case 7:
        class_name[i] = be2(p);
        p += 2;
        break;
      case 8:
      case 16:
      case 19:
      case 20:
        p += 2;
        break;
      case 15:
        p += 3;
        break;
      default:
        tl_log("PARSE_ERROR\ttag=%u", tag);
        free(utf8);
        free(class_name);
        return 0;
    }
  }
  /* Only the class itself, not classes that merely mention it. */
  uint32_t this_class = be2(p + 2);
  const unsigned char* this_name = this_class < cp_count && class_name[this_class] < cp_count
                                       ? utf8[class_name[this_class]]
                                       : NULL;
  if (this_name == NULL || be2(this_name) != sizeof CLASS - 1 ||
      memcmp(this_name + 2, CLASS, sizeof CLASS - 1) != 0) {
    free(utf8);
    free(class_name);
    return 0;
  }
  p += 6;                                           /* access, this, super */
  p += 2 + 2 * be2(p);                              /* interfaces */
  for (int pass = 0; pass < 2 && p < end; pass++) { /* fields, then methods */
    uint32_t count = be2(p);
    p += 2;
    for (uint32_t m = 0; m < count && p < end; m++) {
      const unsigned char* name = utf8[be2(p + 2)];
      uint32_t attrs = be2(p + 6);
      p += 8;
      for (uint32_t a = 0; a < attrs && p < end; a++) {
        const unsigned char* attr = utf8[be2(p)];
        uint32_t attr_len = (uint32_t)be4(p + 2);
        if (pass == 1 && attr != NULL && name != NULL && be2(attr) == 4 &&
            memcmp(attr + 2, "Code", 4) == 0 && method_count < 8) {
          struct method_code* mc = &methods[method_count];
          uint32_t name_len = be2(name);
          uint32_t code_len = (uint32_t)be4(p + 10);
          if (name_len < sizeof mc->name && code_len <= MAX_CODE) {
            memcpy(mc->name, name + 2, name_len);
            memcpy(mc->code, p + 14, code_len);
            mc->length = code_len;
            for (uint32_t pc = 0; pc < code_len;) {
              uint32_t n = insn_length(mc->code, pc, code_len);
              if (n == 0) break;
              mc->boundary[pc] = 1;
              pc += n;
            }
            method_count++;
          }
        }
        p += 6 + attr_len;
      }
    }
  }
  free(utf8);
  free(class_name);
  tl_log("PARSED\tmethods=%d", method_count);
  return 1;
}

static struct method_code* find(jmethodID id) {
  for (int i = 0; i < method_count; i++) {
    if (methods[i].id == id) return &methods[i];
  }
  return NULL;
}

static void instruction(JVMPI_Event* ev) {
  pthread_mutex_lock(&lock);
  struct method_code* mc = find(ev->u.instruction.method_id);
  if (mc == NULL) {
    pthread_mutex_unlock(&lock);
    return;
  }
  jint off = ev->u.instruction.offset;
  mc->events++;
  if (off == 0) mc->offset0++;
  if (off < 0 || (uint32_t)off >= mc->length || !mc->boundary[off]) {
    if (mc->bad_offsets++ < 3) tl_log("BAD_OFFSET\tmethod=%s\toffset=%d", mc->name, (int)off);
    pthread_mutex_unlock(&lock);
    return;
  }
  unsigned op = mc->code[off];
  if ((op >= 0x99 && op <= 0xa6) || op == 0xc6 || op == 0xc7) {
    tl_log("IF\tmethod=%s\toffset=%d\tis_true=%d", mc->name, (int)off,
           ev->u.instruction.u.if_info.is_true != 0);
  } else if (op == 0xaa) {
    const unsigned char* p = mc->code + ((off + 4) & ~3);
    tl_log("TABLESWITCH\tmethod=%s\tkey=%d\tlow=%d\thi=%d\tcode_low=%d\tcode_hi=%d", mc->name,
           (int)ev->u.instruction.u.tableswitch_info.key,
           (int)ev->u.instruction.u.tableswitch_info.low,
           (int)ev->u.instruction.u.tableswitch_info.hi, be4(p + 4), be4(p + 8));
  } else if (op == 0xab) {
    const unsigned char* p = mc->code + ((off + 4) & ~3);
    tl_log("LOOKUPSWITCH\tmethod=%s\tchosen=%d\ttotal=%d\tcode_pairs=%d", mc->name,
           (int)ev->u.instruction.u.lookupswitch_info.chosen_pair_index,
           (int)ev->u.instruction.u.lookupswitch_info.pairs_total, be4(p + 4));
  }
  pthread_mutex_unlock(&lock);
}

static void notify_event(JVMPI_Event* ev) {
  switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD_HOOK: {
      const unsigned char* d = ev->u.class_load_hook.class_data;
      jint n = ev->u.class_load_hook.class_data_len;
      /* Cheap filter first: only class files that mention the name are parsed. */
      for (jint i = 0; i + (jint)sizeof CLASS - 1 <= n && method_count == 0; i++) {
        if (memcmp(d + i, CLASS, sizeof CLASS - 1) == 0) {
          pthread_mutex_lock(&lock);
          parse_class(d, n);
          pthread_mutex_unlock(&lock);
          break;
        }
      }
      break;
    }
    case JVMPI_EVENT_CLASS_LOAD:
      if (strcmp(ev->u.class_load.class_name, "jvmpitest.InstructionProgram") == 0) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < ev->u.class_load.num_methods; i++) {
          for (int j = 0; j < method_count; j++) {
            if (strncmp(methods[j].name, ev->u.class_load.methods[i].method_name,
                        sizeof methods[j].name) == 0) {
              methods[j].id = ev->u.class_load.methods[i].method_id;
            }
          }
        }
        pthread_mutex_unlock(&lock);
      }
      break;
    case JVMPI_EVENT_THREAD_START:
      if (strcmp(ev->u.thread_start.thread_name, "jvmpitest-caller") == 0) {
        caller = ev->u.thread_start.thread_env_id;
      }
      break;
    case JVMPI_EVENT_INSTRUCTION_START:
      if (ev->env_id != NULL && ev->env_id == caller) instruction(ev);
      break;
    default:
      break;
  }
}

JNIEXPORT jlong JNICALL Java_jvmpitest_Agent_hook(JNIEnv* env, jclass cls, jint code, jlong arg,
                                                  jobject obj) {
  (void)env;
  (void)cls;
  (void)arg;
  (void)obj;
  if (code != 2) return -1;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < method_count; i++) {
    tl_log("METHOD\tname=%s\tlength=%u\tevents=%ld\toffset0=%ld\tbad_offsets=%ld\tmid=0x%llx",
           methods[i].name, methods[i].length, methods[i].events, methods[i].offset0,
           methods[i].bad_offsets, PTR(methods[i].id));
  }
  pthread_mutex_unlock(&lock);
  return 0;
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM* jvm, char* options, void* reserved) {
  (void)reserved;
  if (!tl_open(options)) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void**)&jvmpi, JVMPI_VERSION_1_1) != JNI_OK) return JNI_ERR;
  jvmpi->NotifyEvent = notify_event;
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD_HOOK, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
  jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
  tl_log("ENABLE\tevent=%d\trc=%d", (int)JVMPI_EVENT_INSTRUCTION_START,
         (int)jvmpi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL));
  return JNI_OK;
}
