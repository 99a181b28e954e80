// A trace file as a stream of bytes, read as it is parsed: plain, or gzip-compressed (as
// torch.profiler writes `.json.gz`), told apart by its first bytes, not its name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace commbench {

class TraceInput {
 public:
  // UsageError "PATH: cannot read (REASON)" when the file cannot be opened.
  explicit TraceInput(const std::string& path);
  ~TraceInput();
  TraceInput(const TraceInput&) = delete;
  TraceInput& operator=(const TraceInput&) = delete;

  // Up to `size` bytes of the (uncompressed) text; 0 at its end or on a read error. The
  // text decoded before an error is handed out first, so offset() is where it failed.
  std::size_t read(char* data, std::size_t size);
  // Bytes of text handed out so far.
  std::uint64_t offset() const { return offset_; }
  bool compressed() const { return compressed_; }
  // Why the last read failed (a corrupt or cut gzip stream, an I/O error); empty when none.
  const std::string& error() const { return error_; }

 private:
  struct Inflater;
  bool fill();  // more of the file into in_; false at its end or on an error
  std::size_t read_plain(char* data, std::size_t size);
  std::size_t inflate_into(char* data, std::size_t size);

  std::FILE* file_ = nullptr;
  std::unique_ptr<Inflater> inflater_;  // for a gzip file
  std::vector<unsigned char> in_;       // read from the file, not yet used
  std::size_t in_start_ = 0, in_end_ = 0;
  std::uint64_t offset_ = 0;
  bool compressed_ = false;
  bool member_ended_ = false;  // a gzip member ended; another may follow
  std::string error_;
};

}  // namespace commbench
