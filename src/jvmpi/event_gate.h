// SPDX-License-Identifier: Apache-2.0
// The one way events reach the agent's NotifyEvent: which event types the agent enabled, whether
// delivery has begun (JVM_OnLoad returned) or ended (JVM_SHUT_DOWN sent), and in-flight tracking so
// that shutdown waits for events already being delivered.
#pragma once

#include <jvmpi.h>

namespace jvmpi::gate {

// Whether the agent has enabled `event_type` with EnableEvent.
bool is_enabled(jint event_type);
void set_enabled(jint event_type, bool on);

// Whether an event of this type would reach the agent now. Producers check this before doing the
// work of building an event.
bool wants(jint event_type);

// Whether delivery is open at all (requested events bypass the enabled bits, not this).
bool accepting();

// Delivers an enabled event (dropped if the agent disabled it meanwhile or delivery is closed).
void deliver(JVMPI_Event* event);

// Delivers an event the caller has just checked with wants() (the hot path of method events:
// delivery closing meanwhile is still honoured).
void deliver_wanted(JVMPI_Event* event);

// Delivers an event produced by RequestEvent: JVMPI_REQUESTED_EVENT is ORed into its type.
void deliver_requested(JVMPI_Event* event);

// Called once JVM_OnLoad has returned successfully.
void open();

// Closes delivery, waits (bounded) for events being delivered on other threads, then sends
// JVM_SHUT_DOWN on the calling thread if the agent enabled it. Nothing is delivered afterwards.
void shut_down(JNIEnv* env);

bool is_shut_down();

// After a detach (shut_down has run and no event is enabled): back to the state before JVM_OnLoad,
// for the agent of the next attach. Every event disabled, delivery not yet open.
void reopen();

}  // namespace jvmpi::gate
