// SPDX-License-Identifier: Apache-2.0
// The web UI's "Local JVMs": the JVMs on this machine (as `jvmprof jps` lists them), and HPROF
// attached to one with net= to this serve ("profile") or detached again ("stop").
//   GET  /local-jvms.js                 the list's script
//   GET  /api/local-jvms                [{pid, main, javaVersion, attachable, whyNot, profiling}]
//   POST /api/local-jvms/PID/profile    attach (cpu=samples,heap=sites,sample=512k,monitor=y,net=)
//   POST /api/local-jvms/PID/stop       HPROF's final report, detach
// Behind the UI's token like every route, and answered only to requests from this machine
// (loopback): attaching runs code in another process.
#pragma once

#include <string>

namespace httplib {
class Server;
}

namespace jvmprof {

// `agent_address`: HOST:PORT where this serve receives agents (what net= names).
void add_local_jvm_routes(httplib::Server& server, const std::string& agent_address);

}  // namespace jvmprof
