#include "commbench/report/output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commbench/core/error.hpp"

namespace commbench {

namespace {

void check_replaceable(const std::string& path, const std::string& flag) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows symlinks
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw UsageError(flag + " " + path +
                     ": not a regular file (results are renamed into place, which would replace it)");
}

}  // namespace

void check_output_path(const std::string& path, const std::string& flag, bool force, OutputKind kind) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!path.empty() && path.back() == '/') throw UsageError(flag + " " + path + ": names a directory, not a file");
  if (fs::is_directory(path, ec)) throw UsageError(flag + " " + path + ": is a directory");
  if (kind == OutputKind::replaced) check_replaceable(path, flag);
  if (fs::exists(path, ec) && !force)
    throw UsageError(flag + " " + path + ": file exists; pass --force to overwrite it");
}

void prepare_replaced_outputs(std::span<const std::pair<std::string, const char*>> outputs, bool force) {
  for (const auto& [path, flag] : outputs)
    if (!path.empty()) check_output_path(path, flag, force, OutputKind::replaced);
  for (const auto& [path, flag] : outputs)
    if (!path.empty()) create_parent_directories(path, flag);
}

void create_parent_directories(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw UsageError(flag + " " + path + ": cannot create directory " + parent.string() + ": " + ec.message());
  // Found now, before anything is measured, rather than when the results are written.
  const std::string directory = parent.empty() ? "." : parent.string();
  if (::access(directory.c_str(), W_OK) != 0)
    throw UsageError(flag + " " + path + ": cannot write in " + directory + " (" + std::strerror(errno) + ")");
  // access() answers yes to root everywhere; creating the temporary file the result will
  // be written through is the real test (/proc, a read-only mount).
  std::string probe = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw UsageError(flag + " " + path + ": cannot write in " + directory + " (" + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

void prepare_streamed_output(const std::string& path, const std::string& flag) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    create_parent_directories(path, flag);
    return;
  }
  if (::access(path.c_str(), W_OK) != 0)
    throw UsageError(flag + " " + path + ": cannot write (" + std::strerror(errno) + ")");
}

FileHandle open_output_file(const std::string& path, const std::string& flag, bool force) {
  check_output_path(path, flag, force, OutputKind::streamed);
  prepare_streamed_output(path, flag);
  FileHandle file(std::fopen(path.c_str(), "w"));
  if (!file) throw UsageError(flag + " " + path + ": cannot create: " + std::strerror(errno));
  return file;
}

void write_all(std::FILE* out, const std::string& text, const std::string& path) {
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0)
    throw BackendError(path + ": write failed: " + std::strerror(errno));
}

namespace {

// The process's umask, read without changing it: umask(2) can only be read by setting
// it, and other threads (the watchdog, NCCL's) may create files meanwhile.
mode_t current_umask() {
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status) != nullptr)
      found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(status);
    if (found) return static_cast<mode_t>(mask);
  }
  return 022;
}

// Follows a chain of symlinks to the file the shell's '>' would write, which need not
// exist yet (a dangling link creates its target). Stops after 40 links, as the kernel does.
std::string final_target(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) break;
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target.string();
}

// The directory entry of a rename is only durable once the directory itself is synced;
// failing that is not worth an error (the data is in place, only a crash could lose it).
void sync_directory_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text, const std::string& flag) {
  namespace fs = std::filesystem;
  // A symlink is followed, as the shell's '>' would: the link stays, its target changes.
  const std::string target = final_target(path);
  check_replaceable(target, flag);  // checked up front too; a device is never renamed over
  // A name of our own (mkstemp) beside the target: the rename stays within one file
  // system, and no file of the user's, not even an unrelated FILE.tmp, is overwritten.
  std::string temporary = target + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    throw BackendError(flag + " " + path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  const auto fail = [&](const std::string& what, int error) {
    std::remove(temporary.c_str());
    return BackendError(flag + " " + path + ": " + what + ": " + std::strerror(error));
  };
  // mkstemp makes the file private (0600); the result gets the mode fopen would give it.
  std::FILE* out = ::fchmod(fd, 0666 & ~current_umask()) == 0 ? ::fdopen(fd, "w") : nullptr;
  if (out == nullptr) {
    const BackendError error = fail("cannot write", errno);
    ::close(fd);
    throw error;
  }
  try {
    write_all(out, text, flag + " " + path);
  } catch (...) {
    std::fclose(out);
    std::remove(temporary.c_str());
    throw;
  }
  // Synced before the rename, so a crash leaves the old file or the whole new one. A
  // failed close can lose buffered data: such a file must not be renamed into place.
  if (::fsync(::fileno(out)) != 0) {
    const int error = errno;
    std::fclose(out);
    throw fail("write failed", error);
  }
  if (std::fclose(out) != 0) throw fail("write failed", errno);
  if (std::rename(temporary.c_str(), target.c_str()) != 0) throw fail("cannot rename into place", errno);
  sync_directory_of(target);
}

}  // namespace commbench
