// torch.profiler traces read by bench-replay (plain or gzip): a trace that reads, or a
// one-line UsageError naming the file, never a crash or a hang.
#include "commbench/replay/pytorch_trace_reader.hpp"
#include "fuzz_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commbench;
  const std::string& path = fuzz::input_file(data, size);
  fuzz::expect_value_or_usage_error([&] { read_pytorch_trace(path); });
  return 0;
}
