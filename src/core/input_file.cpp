#include "commbench/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "commbench/core/error.hpp"

namespace commbench {

std::string read_input_file(const std::string& path, const std::string& label) {
  const auto cannot_read = [&](const char* reason) { return UsageError(label + ": cannot read (" + reason + ")"); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw cannot_read(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};

  struct stat info {};
  if (::fstat(fd, &info) != 0) throw cannot_read(std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw cannot_read("is a directory");
  const auto too_large = [&] { return UsageError(label + ": larger than 64 MiB"); };
  if (S_ISREG(info.st_mode) && static_cast<std::uintmax_t>(info.st_size) > kMaxInputFileBytes) throw too_large();

  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw cannot_read(std::strerror(errno));
    }
    if (got == 0) break;
    if (text.size() + static_cast<std::size_t>(got) > kMaxInputFileBytes) throw too_large();
    text.append(buffer, static_cast<std::size_t>(got));
  }
  if (text.empty()) throw UsageError(label + ": empty file");
  return text;
}

}  // namespace commbench
