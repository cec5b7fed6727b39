// SPDX-License-Identifier: Apache-2.0
/*
 * A JVMTI agent that redefinition_memory_bench.py loads into a running JVM (jcmd PID
 * JVMTI.agent_load LIB OPTIONS) in one of three modes:
 *   ids           GetClassMethods on every loaded class, so that every method has a jmethodID, as
 *                 after a JVMPI agent's CLASS_LOAD events; the environment is disposed of after.
 *   malloc=FILE   writes the bytes the process has allocated with malloc now (glibc's mallinfo2:
 *                 in use in the arenas plus mmapped chunks), one number.
 *   arenas=FILE   writes glibc's malloc_info XML (per arena: its heap's size and free bytes).
 * Anything else: one error line on stderr and JNI_ERR.
 */
#include <jvmti.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

static jint create_method_ids(JavaVM* vm) {
  jvmtiEnv* jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jint count = 0;
  jclass* classes = NULL;
  if ((*jvmti)->GetLoadedClasses(jvmti, &count, &classes) != JVMTI_ERROR_NONE) {
    (*jvmti)->DisposeEnvironment(jvmti);
    return JNI_ERR;
  }
  for (jint i = 0; i < count; ++i) {
    jint method_count = 0;
    jmethodID* methods = NULL;
    // Fails for classes not yet prepared (and array classes have no methods): nothing to do then.
    if ((*jvmti)->GetClassMethods(jvmti, classes[i], &method_count, &methods) == JVMTI_ERROR_NONE) {
      (*jvmti)->Deallocate(jvmti, (unsigned char*)methods);
    }
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char*)classes);
  (*jvmti)->DisposeEnvironment(jvmti);
  return JNI_OK;
}

static jint write_malloc_in_use(const char* path) {
  const struct mallinfo2 m = mallinfo2();
  FILE* out = fopen(path, "w");
  if (out == NULL) {
    perror(path);
    return JNI_ERR;
  }
  fprintf(out, "%zu\n", m.uordblks + m.hblkhd);
  return fclose(out) == 0 ? JNI_OK : JNI_ERR;
}

static jint write_malloc_info(const char* path) {
  FILE* out = fopen(path, "w");
  if (out == NULL) {
    perror(path);
    return JNI_ERR;
  }
  const int info = malloc_info(0, out);
  return fclose(out) == 0 && info == 0 ? JNI_OK : JNI_ERR;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (options != NULL && strcmp(options, "ids") == 0) return create_method_ids(vm);
  if (options != NULL && strncmp(options, "malloc=", 7) == 0)
    return write_malloc_in_use(options + 7);
  if (options != NULL && strncmp(options, "arenas=", 7) == 0) return write_malloc_info(options + 7);
  fprintf(stderr, "memory_probe: options must be ids, malloc=FILE or arenas=FILE, not '%s'\n",
          options != NULL ? options : "");
  return JNI_ERR;
}
