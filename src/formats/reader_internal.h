// SPDX-License-Identifier: Apache-2.0
// Internal: the file's bytes (memory-mapped or read), kept alive by the Profile.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace hprof::detail {

class MappedFile {
 public:
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  static std::shared_ptr<const MappedFile> copy_of(std::span<const uint8_t> data) {
    auto f = std::make_shared<MappedFile>();
    f->copy_.assign(data.begin(), data.end());
    f->bytes_ = f->copy_;
    return f;
  }
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  void* map_ = nullptr;
  std::vector<uint8_t> copy_;
  std::span<const uint8_t> bytes_;
};

}  // namespace hprof::detail
