// SPDX-License-Identifier: Apache-2.0
/*
 * JNI code of the test programs. LateGetEnvProgram fetches the JVMPI table the way agents with a
 * Java API did, from a native method via GetJavaVM and GetEnv, long after JVM_OnLoad.
 */
#include <jvmpi.h>
#include <stdint.h>

JNIEXPORT jlongArray JNICALL Java_jvmpitest_LateGetEnvProgram_jvmpiFromJni(JNIEnv* env, jclass cls,
                                                                           jint version) {
  JavaVM* vm = NULL;
  void* table = NULL;
  jlong result[3] = {-1000, 0, 0};
  (void)cls;
  if ((*env)->GetJavaVM(env, &vm) == JNI_OK) {
    jint rc = (*vm)->GetEnv(vm, &table, version);
    result[0] = rc;
    if (rc == JNI_OK && table != NULL) {
      result[1] = (jlong)(uintptr_t)table;
      result[2] = (jlong)(unsigned)((JVMPI_Interface*)table)->version;
    }
  }
  jlongArray array = (*env)->NewLongArray(env, 3);
  if (array != NULL) (*env)->SetLongArrayRegion(env, array, 0, 3, result);
  return array;
}

/*
 * JNI code of ObjectProgram: creates and deletes a global and a weak global reference to obj, and
 * returns {global, weak} so the test can match the agent's JNI reference events.
 */
JNIEXPORT jlongArray JNICALL Java_jvmpitest_ObjectProgram_globalRefs(JNIEnv* env, jclass cls,
                                                                     jobject obj) {
  (void)cls;
  jobject global = (*env)->NewGlobalRef(env, obj);
  jweak weak = (*env)->NewWeakGlobalRef(env, obj);
  jlong result[2] = {(jlong)(uintptr_t)global, (jlong)(uintptr_t)weak};
  (*env)->DeleteWeakGlobalRef(env, weak);
  (*env)->DeleteGlobalRef(env, global);
  jlongArray array = (*env)->NewLongArray(env, 2);
  if (array != NULL) (*env)->SetLongArrayRegion(env, array, 0, 2, result);
  return array;
}
