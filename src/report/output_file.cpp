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

}  // namespace commbench
