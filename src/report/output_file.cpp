#include "commbench/report/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "commbench/core/error.hpp"

namespace commbench {

void check_output_path(const std::string& path, const std::string& flag, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!path.empty() && path.back() == '/') throw UsageError(flag + " " + path + ": names a directory, not a file");
  if (fs::is_directory(path, ec)) throw UsageError(flag + " " + path + ": is a directory");
  if (fs::exists(path, ec) && !force)
    throw UsageError(flag + " " + path + ": file exists; pass --force to overwrite it");
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
}

FileHandle open_output_file(const std::string& path, const std::string& flag, bool force) {
  check_output_path(path, flag, force);
  create_parent_directories(path, flag);
  FileHandle file(std::fopen(path.c_str(), "w"));
  if (!file) throw UsageError(flag + " " + path + ": cannot create: " + std::strerror(errno));
  return file;
}

void write_all(std::FILE* out, const std::string& text, const std::string& path) {
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0)
    throw BackendError(path + ": write failed: " + std::strerror(errno));
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& flag) {
  const std::string temporary = path + ".tmp";
  std::FILE* out = std::fopen(temporary.c_str(), "w");
  if (out == nullptr) throw BackendError(flag + " " + temporary + ": cannot create: " + std::strerror(errno));
  try {
    write_all(out, text, flag + " " + temporary);
  } catch (...) {
    std::fclose(out);
    std::remove(temporary.c_str());
    throw;
  }
  // A failed close can lose buffered data: such a file must not be renamed into place.
  if (std::fclose(out) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw BackendError(flag + " " + temporary + ": write failed: " + why);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw BackendError(flag + " " + path + ": cannot rename into place: " + why);
  }
}

}  // namespace commbench
