#include "commbench/report/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "commbench/core/error.hpp"

namespace commbench {

void check_output_path(const std::string& path, const std::string& flag, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
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
    write_all(out, text, temporary);
  } catch (...) {
    std::fclose(out);
    std::remove(temporary.c_str());
    throw;
  }
  std::fclose(out);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw BackendError(flag + " " + path + ": cannot rename into place: " + std::strerror(errno));
  }
}

}  // namespace commbench
