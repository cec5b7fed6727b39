// SPDX-License-Identifier: Apache-2.0
// Internal: a read-only memory mapping of a whole file. A gzip-compressed file is decompressed
// once, streaming, into an unlinked temporary file (in $TMPDIR, else /tmp) that is then mapped,
// so a dump larger than RAM never has to fit in the heap.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace analysis::detail {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  // Throws Error if the file cannot be opened or mapped (or decompressed).
  static MappedFile open(const std::string& path, bool decompress_gzip);
  static bool is_gzip(const std::string& path);
  // Takes over a mapping made elsewhere (unmapped by the destructor).
  static MappedFile adopt(const uint8_t* data, size_t size);

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  bool empty() const { return size_ == 0; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace analysis::detail
