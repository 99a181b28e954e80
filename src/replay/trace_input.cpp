#include "trace_input.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

TraceInput::TraceInput(const std::string& path) {
  errno = 0;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr)
    throw UsageError(fmt::format("{}: cannot read ({})", path, errno != 0 ? std::strerror(errno) : "out of memory"));
  gzbuffer(file, 1 << 17);
  compressed_ = gzdirect(file) == 0;
  file_ = file;
}

TraceInput::~TraceInput() { gzclose(static_cast<gzFile>(file_)); }

std::size_t TraceInput::read(char* data, std::size_t size) {
  gzFile file = static_cast<gzFile>(file_);
  const int got = gzread(file, data, static_cast<unsigned>(std::min<std::size_t>(size, INT_MAX)));
  int code = Z_OK;
  if (got < 0) {
    const char* message = gzerror(file, &code);
    error_ = code == Z_ERRNO ? std::strerror(errno) : message;
    return 0;
  }
  if (got == 0) {
    // A gzip stream cut short reads as an end with Z_BUF_ERROR pending.
    const char* message = gzerror(file, &code);
    if (code != Z_OK) error_ = message;
    return 0;
  }
  offset_ += static_cast<std::uint64_t>(got);
  return static_cast<std::size_t>(got);
}

}  // namespace commbench
