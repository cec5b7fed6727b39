// SPDX-License-Identifier: Apache-2.0
// net=host:port: commands the front end sends back on the same connection (JDK 8's protocol,
// docs/hprof-text-format.md): force a GC, dump the heap, sites or CPU profile, switch tracking and
// sampling, change the trace depth, end the VM.
#pragma once

namespace hprof::agent {

// Starts the listener thread on the output socket (after JVM_INIT_DONE).
bool start_command_listener();

// After the output was closed (a detach): waits, bounded, until the listener thread has returned.
// False when it still runs.
bool wait_for_command_listener_end();

constexpr const char* kListenerThreadName = "HPROF listener";

}  // namespace hprof::agent
