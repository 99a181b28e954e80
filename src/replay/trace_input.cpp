#include "trace_input.hpp"

#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <streambuf>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

namespace {

// zlib's gzread reads plain files too, so one buffer serves both kinds.
class GzipBuffer final : public std::streambuf {
 public:
  explicit GzipBuffer(gzFile file) : file_(file) {}
  ~GzipBuffer() override { gzclose(file_); }
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;

  std::uint64_t offset() const { return delivered_ - static_cast<std::uint64_t>(egptr() - gptr()); }
  const std::string& error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int got = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      error_ = code == Z_ERRNO ? std::strerror(errno) : message;
      return traits_type::eof();
    }
    if (got == 0) {
      // A gzip stream cut short reads as a clean end with Z_BUF_ERROR pending.
      int code = 0;
      const char* message = gzerror(file_, &code);
      if (code != Z_OK) error_ = message;
      return traits_type::eof();
    }
    delivered_ += static_cast<std::uint64_t>(got);
    setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  std::array<char, 1 << 16> buffer_{};
  std::uint64_t delivered_ = 0;
  std::string error_;
};

}  // namespace

struct TraceInput::State {
  std::unique_ptr<GzipBuffer> buffer;
  std::unique_ptr<std::istream> stream;
  bool compressed = false;
};

TraceInput::TraceInput(const std::string& path) : state_(std::make_unique<State>()) {
  errno = 0;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr)
    throw UsageError(fmt::format("{}: cannot read ({})", path, errno != 0 ? std::strerror(errno) : "out of memory"));
  gzbuffer(file, 1 << 17);
  state_->compressed = gzdirect(file) == 0;
  state_->buffer = std::make_unique<GzipBuffer>(file);
  state_->stream = std::make_unique<std::istream>(state_->buffer.get());
}

TraceInput::~TraceInput() {
  state_->stream.reset();
  state_->buffer.reset();
}

std::istream& TraceInput::stream() { return *state_->stream; }
std::uint64_t TraceInput::offset() const { return state_->buffer->offset(); }
bool TraceInput::compressed() const { return state_->compressed; }
std::string TraceInput::error() const { return state_->buffer->error(); }

}  // namespace commbench
