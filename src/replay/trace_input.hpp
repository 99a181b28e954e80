// A trace file as a stream of bytes, read as it is parsed: plain, or gzip-compressed (as
// torch.profiler writes `.json.gz`), told apart by its first bytes, not its name.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

namespace commbench {

class TraceInput {
 public:
  // UsageError "PATH: cannot read (REASON)" when the file cannot be opened.
  explicit TraceInput(const std::string& path);
  ~TraceInput();
  TraceInput(const TraceInput&) = delete;
  TraceInput& operator=(const TraceInput&) = delete;

  std::istream& stream();
  // Bytes of the (uncompressed) text handed out so far.
  std::uint64_t offset() const;
  bool compressed() const;
  // A read error of the file (a corrupt gzip member): empty when none.
  std::string error() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace commbench
