// SPDX-License-Identifier: Apache-2.0
/*
 * JNI helper library of the heap tests (class jvmpiheap.Native, loaded with System.load): object
 * and array allocation through JNI, and global and weak global references the program controls.
 * It knows nothing of JVMPI.
 */
#include <jni.h>
#include <stdint.h>

JNIEXPORT jobject JNICALL Java_jvmpiheap_Native_allocObject(JNIEnv* env, jclass cls, jclass k) {
  (void)cls;
  return (*env)->AllocObject(env, k);
}

JNIEXPORT jobject JNICALL Java_jvmpiheap_Native_newObject(JNIEnv* env, jclass cls, jclass k) {
  (void)cls;
  jmethodID ctor = (*env)->GetMethodID(env, k, "<init>", "()V");
  if (ctor == NULL) return NULL;
  return (*env)->NewObject(env, k, ctor);
}

JNIEXPORT jobjectArray JNICALL Java_jvmpiheap_Native_newObjectArray(JNIEnv* env, jclass cls,
                                                                    jclass element, jint length) {
  (void)cls;
  return (*env)->NewObjectArray(env, length, element, NULL);
}

JNIEXPORT jintArray JNICALL Java_jvmpiheap_Native_newIntArray(JNIEnv* env, jclass cls,
                                                              jint length) {
  (void)cls;
  return (*env)->NewIntArray(env, length);
}

JNIEXPORT jstring JNICALL Java_jvmpiheap_Native_newString(JNIEnv* env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, "made by JNI");
}

JNIEXPORT jlong JNICALL Java_jvmpiheap_Native_newGlobalRef(JNIEnv* env, jclass cls, jobject o) {
  (void)cls;
  return (jlong)(intptr_t)(*env)->NewGlobalRef(env, o);
}

JNIEXPORT void JNICALL Java_jvmpiheap_Native_deleteGlobalRef(JNIEnv* env, jclass cls, jlong ref) {
  (void)cls;
  (*env)->DeleteGlobalRef(env, (jobject)(intptr_t)ref);
}

JNIEXPORT jlong JNICALL Java_jvmpiheap_Native_newWeakGlobalRef(JNIEnv* env, jclass cls, jobject o) {
  (void)cls;
  return (jlong)(intptr_t)(*env)->NewWeakGlobalRef(env, o);
}

JNIEXPORT void JNICALL Java_jvmpiheap_Native_deleteWeakGlobalRef(JNIEnv* env, jclass cls,
                                                                 jlong ref) {
  (void)cls;
  (*env)->DeleteWeakGlobalRef(env, (jweak)(intptr_t)ref);
}
