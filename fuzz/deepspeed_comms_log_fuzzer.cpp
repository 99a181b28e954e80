// DeepSpeed comms logs read by bench-replay: any text is a log that reads or a one-line
// UsageError, and a log that reads summarizes over any rank count, never a crash.
#include "commbench/replay/deepspeed_comms_log.hpp"
#include "fuzz_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commbench;
  const std::string& path = fuzz::input_file(data, size);
  fuzz::expect_value_or_usage_error([&] {
    const DeepSpeedCommsLog log = read_deepspeed_comms_log(path);
    std::vector<std::string> notes;
    summarize_deepspeed_log(log, 3, notes);
  });
  return 0;
}
