// Result files: created with their parent directories, never silently overwritten.
#pragma once

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <utility>

namespace commbench {

struct FileCloser {
  void operator()(std::FILE* f) const noexcept {
    if (f != nullptr) std::fclose(f);
  }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

// How a result file is written. A streamed file is opened and written in place, so it may
// be a FIFO or /dev/stdout. A replaced file is written beside and renamed over the old
// one, which would replace a device or FIFO with a regular file: those are refused.
enum class OutputKind { streamed, replaced };

// Throws UsageError naming `flag` when `path` exists and !force, is a directory, or (for
// a replaced file) exists and is not a regular file, directly or through a symlink.
void check_output_path(const std::string& path, const std::string& flag, bool force, OutputKind kind);
// Creates the directories above `path`; UsageError naming `flag` when that fails.
void create_parent_directories(const std::string& path, const std::string& flag);
// For a streamed file: one that exists (a device, a FIFO, a file) must be writable itself,
// whatever its folder allows (/dev for /dev/stdout); a new one needs its folders.
void prepare_streamed_output(const std::string& path, const std::string& flag);
// The files a command replaces at its end (path, flag; empty paths skipped): every one
// checked (check_output_path, replaced) before any directory is made, so a refusal
// leaves nothing behind; then their parent directories.
void prepare_replaced_outputs(std::span<const std::pair<std::string, const char*>> outputs, bool force);
// check_output_path (streamed), then creates parent directories and opens `path` for writing.
FileHandle open_output_file(const std::string& path, const std::string& flag, bool force);
// Writes everything or throws BackendError naming `path`.
void write_all(std::FILE* out, const std::string& text, const std::string& path);
// Writes `path` through a temporary file (PATH.tmp.XXXXXX, a new name, synced) renamed
// into place, so the file is either whole
// or absent (an interrupted or failed write never leaves half a document).
void write_file_atomically(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace commbench
