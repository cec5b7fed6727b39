// SPDX-License-Identifier: Apache-2.0
// StreamReader: tells the two formats apart by their first bytes and hands the bytes to the text
// parser (line by line) or the formats library's binary StreamParser.
#include <chrono>
#include <fstream>

#include "binary_profile.h"
#include "profiles.h"
#include "text_profile.h"

namespace profiles {

namespace {
// "JAVA PROFILE 1.0.1" / "1.0.2": the binary header ends the magic with a NUL, the text header
// follows it with ", created".
constexpr std::string_view kMagic = "JAVA PROFILE 1.0.";
constexpr size_t kMagicDecided = kMagic.size() + 2;  // magic, version digit, then NUL or ','
}  // namespace

struct StreamReader::Impl {
  std::string source;
  size_t max_line, max_record;
  JavaProfile profile;
  std::string head;  // first bytes, until the format is known
  std::unique_ptr<TextProfileParser> text;
  std::unique_ptr<BinaryProfileParser> binary;
  uint64_t bytes = 0;
  PeriodHandler on_period;

  void decide() {
    if (head.size() < kMagicDecided) {
      if (kMagic.substr(0, std::min(head.size(), kMagic.size())) !=
          std::string_view(head).substr(0, std::min(head.size(), kMagic.size())))
        throw ProfileError(source + ": not an HPROF profile (it does not start with \"" +
                           std::string(kMagic) + "x\")");
      return;
    }
    if (head.compare(0, kMagic.size(), kMagic) != 0)
      throw ProfileError(source + ": not an HPROF profile (it does not start with \"" +
                         std::string(kMagic) + "x\")");
    if (head[kMagicDecided - 1] == '\0') {
      profile.binary = true;
      binary = std::make_unique<BinaryProfileParser>(profile, source, max_record, on_period);
    } else {
      text = std::make_unique<TextProfileParser>(profile, source, max_line, on_period);
    }
    std::string pending;
    pending.swap(head);
    feed_decided(pending);
  }

  void feed_decided(std::string_view bytes_in) {
    if (text) text->feed(bytes_in);
    if (binary) binary->feed(bytes_in);
  }
};

StreamReader::StreamReader(std::string source, size_t max_line, size_t max_record)
    : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  impl_->profile.source = impl_->source;
  impl_->max_line = max_line;
  impl_->max_record = max_record;
}

StreamReader::~StreamReader() = default;

void StreamReader::feed(std::string_view bytes) {
  impl_->bytes += bytes.size();
  if (impl_->text || impl_->binary) return impl_->feed_decided(bytes);
  impl_->head.append(bytes);
  impl_->decide();
}

void StreamReader::on_period(std::function<void(const PeriodDelta&)> handler) {
  impl_->on_period = std::move(handler);
}

void StreamReader::finish() {
  if (impl_->text) return impl_->text->finish();
  if (impl_->binary) return impl_->binary->finish();
  if (impl_->bytes == 0) throw ProfileError(impl_->source + ": empty (no HPROF header)");
  throw ProfileError(impl_->source + ": ends inside the HPROF header");
}

const JavaProfile& StreamReader::profile() const {
  return impl_->profile;
}
JavaProfile& StreamReader::profile() {
  return impl_->profile;
}
bool StreamReader::binary() const {
  return impl_->profile.binary;
}
uint64_t StreamReader::bytes() const {
  return impl_->bytes;
}
size_t StreamReader::buffered() const {
  if (impl_->text) return impl_->text->buffered();
  if (impl_->binary) return impl_->binary->buffered();
  return impl_->head.size();
}

JavaProfile read_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ProfileError(path + ": cannot open");
  StreamReader reader(path);
  std::string buffer(1 << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    reader.feed(std::string_view(buffer.data(), n));
  }
  if (in.bad()) throw ProfileError(path + ": read error");
  reader.finish();
  return std::move(reader.profile());
}

const Trace* JavaProfile::trace(uint32_t serial) const {
  auto it = traces.find(serial);
  return it == traces.end() ? nullptr : &it->second;
}

std::string JavaProfile::thread_name(uint32_t serial) const {
  auto it = threads.find(serial);
  return it == threads.end() ? std::string() : it->second.name;
}

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace profiles
