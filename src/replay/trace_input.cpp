#include "trace_input.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

namespace {

constexpr std::size_t kInputBytes = std::size_t{1} << 17;
constexpr int kGzipWindow = 15 + 16;  // inflate's window bits for a gzip header and trailer

bool gzip_magic(const unsigned char* bytes, std::size_t size) {
  return size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

}  // namespace

struct TraceInput::Inflater {
  z_stream stream{};
  Inflater() {
    if (inflateInit2(&stream, kGzipWindow) != Z_OK) throw BackendError("zlib: cannot start inflating (out of memory)");
  }
  ~Inflater() { inflateEnd(&stream); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
};

TraceInput::TraceInput(const std::string& path) : in_(kInputBytes) {
  errno = 0;
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr)
    throw UsageError(fmt::format("{}: cannot read ({})", path, errno != 0 ? std::strerror(errno) : "out of memory"));
  // Two bytes tell gzip from plain text; a file shorter than that is plain.
  while (in_end_ < 2 && fill()) {
  }
  compressed_ = gzip_magic(in_.data(), in_end_);
  if (compressed_) inflater_ = std::make_unique<Inflater>();
}

TraceInput::~TraceInput() {
  if (file_ != nullptr) std::fclose(file_);
}

bool TraceInput::fill() {
  // What is left moves to the front, so that there is always room to read into.
  if (in_start_ > 0) {
    std::memmove(in_.data(), in_.data() + in_start_, in_end_ - in_start_);
    in_end_ -= in_start_;
    in_start_ = 0;
  }
  if (in_end_ == in_.size()) return true;
  const std::size_t got = std::fread(in_.data() + in_end_, 1, in_.size() - in_end_, file_);
  in_end_ += got;
  if (got == 0 && std::ferror(file_)) error_ = std::strerror(errno);
  return got > 0;
}

std::size_t TraceInput::read_plain(char* data, std::size_t size) {
  if (in_start_ == in_end_ && !fill()) return 0;
  const std::size_t got = std::min(size, in_end_ - in_start_);
  std::memcpy(data, in_.data() + in_start_, got);
  in_start_ += got;
  return got;
}

std::size_t TraceInput::inflate_into(char* data, std::size_t size) {
  z_stream& stream = inflater_->stream;
  stream.next_out = reinterpret_cast<Bytef*>(data);
  stream.avail_out = static_cast<uInt>(std::min<std::size_t>(size, UINT_MAX));
  const uInt room = stream.avail_out;
  while (stream.avail_out == room && error_.empty()) {
    if (in_start_ == in_end_ && !fill()) {
      // The file ends: whole after a member's trailer, cut short inside one.
      if (!member_ended_ && error_.empty()) error_ = "unexpected end of file";
      break;
    }
    if (member_ended_) {
      // Another gzip member follows (as `cat a.gz b.gz` makes); anything else after a
      // member is ignored, as gzip does.
      if (in_end_ - in_start_ < 2 && fill()) continue;
      if (!gzip_magic(in_.data() + in_start_, in_end_ - in_start_)) {
        in_start_ = in_end_;
        std::fseek(file_, 0, SEEK_END);
        break;
      }
      inflateReset(&stream);
      member_ended_ = false;
    }
    stream.next_in = in_.data() + in_start_;
    stream.avail_in = static_cast<uInt>(in_end_ - in_start_);
    const int code = inflate(&stream, Z_NO_FLUSH);
    in_start_ = in_end_ - stream.avail_in;
    if (code == Z_STREAM_END) {
      member_ended_ = true;
    } else if (code != Z_OK && code != Z_BUF_ERROR) {
      error_ = stream.msg != nullptr ? stream.msg : "corrupt gzip data";
    }
  }
  return room - stream.avail_out;
}

std::size_t TraceInput::read(char* data, std::size_t size) {
  if (size == 0 || !error_.empty()) return 0;
  const std::size_t got = compressed_ ? inflate_into(data, size) : read_plain(data, size);
  offset_ += got;
  return got;
}

}  // namespace commbench
