// SPDX-License-Identifier: Apache-2.0
// hprof_check FILE...: the structural check of the HPROF tests (hprof_text.cpp) as a command, for
// scripts that run real programs under HPROF (scripts/real-programs.sh). Prints one line per file;
// exits 0 when every file is a well-formed java.hprof.txt, 1 when one is not, 2 on bad arguments.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "hprof_text.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cerr << "usage: hprof_check FILE...  (checks HPROF text reports, java.hprof.txt)\n";
    return argc < 2 ? 2 : 0;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cout << argv[i] << ": cannot be read\n";
      status = 1;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    const hproftest::Profile p = hproftest::ParseProfile(text.str());
    if (p.ok()) {
      std::cout << argv[i] << ": well formed (" << p.traces.size() << " traces)\n";
    } else {
      std::cout << argv[i] << ": not well formed:\n" << p.error_text(10) << "\n";
      status = 1;
    }
  }
  return status;
}
