// A trace file as a stream of bytes, read as it is parsed: plain, or gzip-compressed (as
// torch.profiler writes `.json.gz`), told apart by its first bytes, not its name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace commbench {

class TraceInput {
 public:
  // UsageError "PATH: cannot read (REASON)" when the file cannot be opened.
  explicit TraceInput(const std::string& path);
  ~TraceInput();
  TraceInput(const TraceInput&) = delete;
  TraceInput& operator=(const TraceInput&) = delete;

  // Up to `size` bytes of the (uncompressed) text; 0 at its end or on a read error.
  std::size_t read(char* data, std::size_t size);
  // Bytes of text handed out so far.
  std::uint64_t offset() const { return offset_; }
  bool compressed() const { return compressed_; }
  // Why the last read failed (a corrupt or cut gzip stream, an I/O error); empty when none.
  const std::string& error() const { return error_; }

 private:
  void* file_;  // gzFile: zlib's gzread reads plain files too
  std::uint64_t offset_ = 0;
  bool compressed_ = false;
  std::string error_;
};

}  // namespace commbench
