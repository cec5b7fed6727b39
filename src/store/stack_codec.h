// SPDX-License-Identifier: Apache-2.0
// A stack's frame ids as one small blob (LEB128 varints, root first): the key that makes the same
// stack one row however many periods hold it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace store {

std::string encode_frame_ids(const std::vector<int64_t>& ids);
// false on a malformed blob (truncated varint, negative id).
bool decode_frame_ids(std::string_view blob, std::vector<int64_t>& ids);
// The frame names as one unambiguous string (each prefixed by its length): a writer's cache key
// that finds a known stack with one hash instead of one per frame.
std::string frames_key(const std::vector<std::string>& frames);

}  // namespace store
