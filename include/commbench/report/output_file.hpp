// Result files: created with their parent directories, never silently overwritten.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

namespace commbench {

struct FileCloser {
  void operator()(std::FILE* f) const noexcept {
    if (f != nullptr) std::fclose(f);
  }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

// Throws UsageError naming `flag` when `path` exists and !force, or is a directory.
void check_output_path(const std::string& path, const std::string& flag, bool force);
// Creates the directories above `path`; UsageError naming `flag` when that fails.
void create_parent_directories(const std::string& path, const std::string& flag);
// check_output_path, then creates parent directories and opens `path` for writing.
FileHandle open_output_file(const std::string& path, const std::string& flag, bool force);
// Writes everything or throws BackendError naming `path`.
void write_all(std::FILE* out, const std::string& text, const std::string& path);
// Writes `path` through a temporary file (PATH.tmp.XXXXXX, a new name, synced) renamed
// into place, so the file is either whole
// or absent (an interrupted or failed write never leaves half a document).
void write_file_atomically(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace commbench
