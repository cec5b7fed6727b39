// SPDX-License-Identifier: Apache-2.0
// net=: who this JVM is, sent at the start of the stream so that a front end watching many JVMs
// shows them by name rather than by socket address: an IDENTITY line (format=a) or note record
// (format=b) "IDENTITY: pid=P host=H main=M vm=V start=MS labels=k=v;k2=v2"
// (docs/jvmprof-serve.md).
#pragma once

#include <jni.h>

#include <string>

#include "options.h"

namespace hprof::agent {

// Reads the JVM's version and main class or jar from its system properties (JVMTI, in the
// OnLoad phase) and the host name and pid from the system; the start time is now (the agent
// loads as the JVM starts), in ms since the Unix epoch.
std::string identity_text(JavaVM* vm, const Options& options);

// The identity sent at the start of the stream, kept for the hello of a reconnect.
void remember_identity(std::string text);
const std::string& remembered_identity();

// A value as one word of the IDENTITY line: '%', spaces and control characters as %XX.
std::string identity_word(const std::string& value);

}  // namespace hprof::agent
