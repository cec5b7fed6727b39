// SPDX-License-Identifier: Apache-2.0
// The web UI's object view and dump comparison: JSON routes over the analysis library.
//   GET /api/profiles/N/heap/object?id=0x..[&offset=K&limit=L]    fields, elements, statics
//   GET /api/profiles/N/heap/referrers?id=0x..[&offset=K&limit=L] who points at it, paged
//   GET /api/profiles/N/heap/dominated?id=0x..|root[&offset=K&limit=L]  dominator tree, down
//   GET /api/heap/diff?before=N&after=M                           per-class growth
#pragma once

namespace httplib {
class Server;
}

namespace jvmprof {

class SessionRegistry;

void add_heap_object_routes(httplib::Server& server, SessionRegistry& registry);

}  // namespace jvmprof
