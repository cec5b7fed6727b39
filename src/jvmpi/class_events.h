// SPDX-License-Identifier: Apache-2.0
// CLASS_LOAD, CLASS_UNLOAD and CLASS_LOAD_HOOK, and requested CLASS_LOAD.
#pragma once

#include <jni.h>
#include <jvmpi.h>
#include <jvmti.h>

#include <string>
#include <vector>

namespace jvmpi::class_events {

void JNICALL on_class_prepare(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread, jclass klass);

void JNICALL on_class_file_load_hook(jvmtiEnv* jvmti, JNIEnv* jni, jclass class_being_redefined,
                                     jobject loader, const char* name, jobject protection_domain,
                                     jint class_data_len, const unsigned char* class_data,
                                     jint* new_class_data_len, unsigned char** new_class_data);

// Sends CLASS_LOAD for every loaded class the agent has not been told about yet (classes loaded
// before our events could be delivered; called at VM initialisation). With `link`, loaded classes
// not yet linked are linked first, so they can be described.
void announce_loaded_classes(JNIEnv* jni, bool link);

// Called before CLASS_LOAD is disabled: every loaded class (also those not yet linked, and array
// classes) is announced while the agent still wants CLASS_LOAD, so that no later heap dump or
// event names a class the agent was not given. Returns whether CLASS_LOAD was on (then
// announce_after_disable must follow the switch-off).
bool announce_before_disable(JNIEnv* jni);

// Called right after CLASS_LOAD was switched off: announces the classes loaded between the sweep
// of announce_before_disable and the switch-off, which nothing else would announce.
void announce_after_disable(JNIEnv* jni);

// Makes sure the agent has had CLASS_LOAD for `klass` (if it wants CLASS_LOAD; a loaded class not
// yet linked is linked for it) and returns its ID.
jobjectID ensure_announced(JNIEnv* jni, jclass klass);

// Links a class the VM has loaded but not yet linked (its fields and methods are then known to
// JVMTI; the ClassPrepare it causes announces it). Classes restored from the CDS archive can
// have instances in the heap before they are linked. Returns whether the class is prepared now.
bool link_class(JNIEnv* jni, jclass klass);

// RequestEvent(CLASS_LOAD, class_id).
jint request_class_load(JNIEnv* jni, jobjectID class_id);

// Forgets which classes the agent was told of (a detach): the next agent hears of all of them.
void forget_announcements();

// Of the tags of freed objects, removes those of classes (and sends CLASS_UNLOAD for them, if the
// agent wants it); returns the class tags.
std::vector<jlong> take_classes(std::vector<jlong>& freed_tags);

// "java.lang.String" for "Ljava/lang/String;", "[I" for "[I", "[Ljava.lang.Object;" for arrays
// of references (the names Class.getName gives).
std::string external_class_name(const char* signature);

}  // namespace jvmpi::class_events
