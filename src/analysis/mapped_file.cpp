// SPDX-License-Identifier: Apache-2.0
#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "analysis.h"

namespace analysis::detail {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Decompresses `path` into an unlinked temporary file and returns its descriptor.
int decompress_to_temp(const std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/jvmprof-gunzip-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int out = ::mkstemp(name.data());
  if (out < 0)
    fail(pattern, std::string("cannot create a temporary file: ") + std::strerror(errno));
  ::unlink(name.data());
  gzFile in = ::gzopen(path.c_str(), "rb");
  if (!in) {
    ::close(out);
    fail(path, std::string("cannot open: ") + std::strerror(errno));
  }
  ::gzbuffer(in, 1 << 20);
  std::vector<char> buffer(1 << 20);
  uint64_t total = 0;
  for (;;) {
    int n = ::gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) break;
    if (n == 0) break;
    for (int done = 0; done < n;) {
      ssize_t w = ::write(out, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ::gzclose(in);
        ::close(out);
        fail(path, std::string("cannot write the decompressed copy: ") + std::strerror(errno));
      }
      done += static_cast<int>(w);
    }
    total += static_cast<uint64_t>(n);
  }
  int err = Z_OK;
  const char* message = ::gzerror(in, &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    std::string m = message ? message : "error";
    ::gzclose(in);
    ::close(out);
    fail(path, "gzip data broken after " + std::to_string(total) + " decompressed bytes: " + m);
  }
  ::gzclose(in);
  return out;
}

}  // namespace

MappedFile::~MappedFile() {
  if (data_ && size_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ && size_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile MappedFile::adopt(const uint8_t* data, size_t size) {
  MappedFile file;
  file.data_ = data;
  file.size_ = size;
  return file;
}

bool MappedFile::is_gzip(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  unsigned char magic[2] = {0, 0};
  return fd.get() >= 0 && ::pread(fd.get(), magic, 2, 0) == 2 && magic[0] == 0x1f &&
         magic[1] == 0x8b;
}

MappedFile MappedFile::open(const std::string& path, bool decompress_gzip) {
  int raw = decompress_gzip ? decompress_to_temp(path) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  MappedFile file;
  if (st.st_size == 0) return file;
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) fail(path, std::string("cannot map: ") + std::strerror(errno));
  file.data_ = static_cast<const uint8_t*>(p);
  file.size_ = static_cast<size_t>(st.st_size);
  return file;
}

}  // namespace analysis::detail
