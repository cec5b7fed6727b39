// SPDX-License-Identifier: Apache-2.0
// A JVMTI test agent, independent of the runtime, for the attach tests: loaded into a running VM
// (jcmd PID JVMTI.agent_load libbytecode_probe.so 'CLASS=FILE'), it writes the bytecodes the VM
// holds now for every method of the class whose JVM signature is CLASS (e.g.
// Lhproftest/AttachTarget;) to FILE, one line per method: name, descriptor, bytecodes in hex.
// Comparing two such files tells whether a class's code is back to what it was.
// With the option string 'malloc=FILE' it writes instead the bytes the process has allocated with
// malloc now (glibc's mallinfo2: in use in the arenas plus mmapped chunks), one number: minus
// what the VM's Native Memory Tracking counts as its own malloc, what other code holds.
#include <jvmti.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_class(jvmtiEnv* jvmti, jclass klass, FILE* out) {
  jint count = 0;
  jmethodID* methods = NULL;
  if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) != JVMTI_ERROR_NONE) return 0;
  for (jint i = 0; i < count; ++i) {
    char* name = NULL;
    char* descriptor = NULL;
    jint length = 0;
    unsigned char* code = NULL;
    if ((*jvmti)->GetMethodName(jvmti, methods[i], &name, &descriptor, NULL) != JVMTI_ERROR_NONE) {
      continue;
    }
    fprintf(out, "%s %s ", name, descriptor);
    if ((*jvmti)->GetBytecodes(jvmti, methods[i], &length, &code) == JVMTI_ERROR_NONE) {
      for (jint b = 0; b < length; ++b) fprintf(out, "%02x", code[b]);
      (*jvmti)->Deallocate(jvmti, code);
    } else {
      fputs("<native or abstract>", out);
    }
    fputc('\n', out);
    (*jvmti)->Deallocate(jvmti, (unsigned char*)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char*)descriptor);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char*)methods);
  return 1;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  if (options != NULL && strncmp(options, "malloc=", 7) == 0) {
    const struct mallinfo2 m = mallinfo2();
    FILE* out = fopen(options + 7, "w");
    if (out == NULL) return JNI_ERR;
    fprintf(out, "%zu\n", m.uordblks + m.hblkhd);
    return fclose(out) == 0 ? JNI_OK : JNI_ERR;
  }
  const char* eq = options != NULL ? strchr(options, '=') : NULL;
  if (eq == NULL) {
    fprintf(stderr, "bytecode_probe: options must be CLASS_SIGNATURE=FILE\n");
    return JNI_ERR;
  }
  char signature[512];
  const size_t n = (size_t)(eq - options);
  if (n >= sizeof signature) return JNI_ERR;
  memcpy(signature, options, n);
  signature[n] = '\0';
  jvmtiEnv* jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_11) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_get_bytecodes = 1;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  jint count = 0;
  jclass* classes = NULL;
  if ((*jvmti)->GetLoadedClasses(jvmti, &count, &classes) != JVMTI_ERROR_NONE) return JNI_ERR;
  FILE* out = fopen(eq + 1, "w");
  int found = 0;
  for (jint i = 0; out != NULL && i < count && !found; ++i) {
    char* sig = NULL;
    if ((*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) != JVMTI_ERROR_NONE) continue;
    if (strcmp(sig, signature) == 0) found = write_class(jvmti, classes[i], out);
    (*jvmti)->Deallocate(jvmti, (unsigned char*)sig);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char*)classes);
  if (out != NULL) fclose(out);
  (*jvmti)->DisposeEnvironment(jvmti);
  if (!found)
    fprintf(stderr, "bytecode_probe: class %s not loaded or %s not writable\n", signature, eq + 1);
  return found ? JNI_OK : JNI_ERR;
}
