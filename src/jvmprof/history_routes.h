// SPDX-License-Identifier: Apache-2.0
// The web UI's History view: JSON routes over the profile store that serve --store writes, through
// the same query API as jvmprof query (store.h). Times are RFC 3339, relative ("-1h", "now") or ms
// since the epoch; match=KEY=VALUE may repeat (all must hold); measure= defaults to cpu-samples.
//   GET /api/history                      {store, measures}; 404 when serve runs without --store
//   GET /api/history/jvms                 the stored JVMs: identity, labels, first/last, periods
//   GET /api/history/labels               label keys and their values
//   GET /api/history/timeline?from&to[&measure&match&group=KEY&bucket=MS]
//                                         the measure's total per time bucket (and label value);
//                                         measure=all: {timelines: [{measure, unit, total,
//                                         points}]}, one per measure with data in the window
//   GET /api/history/flame?from&to[&measure&match&format=collapsed]
//                                         [from, to) merged: flame JSON (or collapsed stacks)
//   GET /api/history/diff?from&to&baseFrom&baseTo[&measure&match]
//                                         {base, target}: two flame trees for the diff view
#pragma once

#include <cstdint>

namespace httplib {
class Server;
}
namespace store {
class ProfileStore;
}

namespace jvmprof {

// `store` may be null (serve without --store): every route then answers 404 with why.
void add_history_routes(httplib::Server& server, store::ProfileStore* store);

// The timeline's bucket when the request names none: the smallest of 1 s, 5 s, 10 s, 30 s,
// 1 min, 5 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h, 1 d that gives at most `max_buckets`.
int64_t history_bucket_ms(int64_t range_ms, int64_t max_buckets = 120);

}  // namespace jvmprof
