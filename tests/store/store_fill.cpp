// SPDX-License-Identifier: Apache-2.0
// Test tool: stores an HPROF profile file (java.hprof.txt or java.hprof) as one period of a JVM,
// the way jvmprof serve stores a period's delta, so that scripts can build stores with known
// contents.
//   store_fill --store S --host H --pid N --start MS --end MS [--label K=V]... PROFILE
#include <cstdio>
#include <cstdlib>
#include <string>

#include "profiles.h"
#include "store.h"

int main(int argc, char** argv) {
  std::string location, profile_path;
  store::JvmIdentity jvm{"localhost", 1, "demo.App", "17", 0, {}};
  int64_t start = 0, end = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help") {
      std::printf(
          "usage: store_fill --store S --host H --pid N --start MS --end MS [--label K=V]... "
          "PROFILE\n");
      return 0;
    }
    const bool has_value = i + 1 < argc;
    if (a == "--store" && has_value) {
      location = argv[++i];
    } else if (a == "--host" && has_value) {
      jvm.host = argv[++i];
    } else if (a == "--pid" && has_value) {
      jvm.pid = std::atoll(argv[++i]);
    } else if (a == "--start" && has_value) {
      start = std::atoll(argv[++i]);
    } else if (a == "--end" && has_value) {
      end = std::atoll(argv[++i]);
    } else if (a == "--label" && has_value) {
      auto m = store::parse_matcher(argv[++i]);
      if (!m) {
        std::fprintf(stderr, "store_fill: --label takes K=V\n");
        return 2;
      }
      jvm.labels[m->key] = m->value;
    } else if (a[0] != '-' && profile_path.empty()) {
      profile_path = a;
    } else {
      std::fprintf(stderr, "store_fill: unexpected argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (location.empty() || profile_path.empty() || end <= start) {
    std::fprintf(stderr, "store_fill: needs --store, --start < --end and PROFILE\n");
    return 2;
  }
  try {
    auto s = store::open_store(location);
    s->append(store::period_from_profile(jvm, start, end, profiles::read_profile(profile_path)));
    s->flush();
    const auto st = s->stats();
    if (st.committed != 1) {
      std::fprintf(stderr, "store_fill: not committed: %s\n", st.last_error.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "store_fill: %s\n", e.what());
    return 1;
  }
  return 0;
}
