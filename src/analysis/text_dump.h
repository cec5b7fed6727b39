// SPDX-License-Identifier: Apache-2.0
// Internal: text (format=a) heap dumps, converted to the binary format the indexer reads.
#pragma once

#include <string>

namespace analysis::detail {

// True if `path` is an HPROF text profile ("JAVA PROFILE 1.0.x, created ...").
bool is_text_profile(const std::string& path);

// Writes the newest complete HEAP DUMP section of the text profile at `text_path` as a binary
// HPROF dump (identifier size 8) and returns its path: if `beside`,
// `text_path`.jvmprof-heap.hprof, reused while it is newer than the text; otherwise (or if that
// cannot be written) a new file under $TMPDIR that the caller removes. Throws Error when the text
// holds no complete heap dump or a record is malformed (one line naming the line number).
std::string convert_text_dump(const std::string& text_path, bool beside);

}  // namespace analysis::detail
