#include "commbench/topology/sysfs_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "commbench/core/error.hpp"

namespace commbench {

namespace fs = std::filesystem;

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::optional<std::string> read_sysfs_attribute(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw UsageError(path.string() + ": cannot read (" + std::strerror(errno) + ")");
  }
  // sysfs attributes are at most a page; reading one page also bounds a hostile file.
  std::array<char, 4096> buffer{};
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  const int error = errno;
  ::close(fd);
  if (n < 0) {
    if (error == EINVAL || error == ENODATA || error == EOPNOTSUPP || error == EIO) return std::nullopt;
    throw UsageError(path.string() + ": cannot read (" + std::strerror(error) + ")");
  }
  return trimmed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
}

std::vector<fs::path> list_sysfs_directory(const fs::path& directory) {
  std::vector<fs::path> entries;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return entries;
  fs::directory_iterator it(directory, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) entries.push_back(it->path());
  if (ec) throw UsageError(directory.string() + ": cannot list (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace commbench
