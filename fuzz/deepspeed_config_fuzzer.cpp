// --deepspeed-config files. Whatever parses must give settings the ZeRO schedules can
// build a step from (buckets of 0 or 2^64 elements included), never a crash.
#include "commbench/pattern/deepspeed_config.hpp"
#include "commbench/pattern/pattern_config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commbench;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_value_or_usage_error([&] {
    std::vector<std::string> warnings;
    const DeepSpeedConfig parsed = parse_deepspeed_config(text, "--deepspeed-config fuzz.json", 64, warnings);
    for (const std::string& warning : warnings)
      if (warning.find('\n') != std::string::npos) std::abort();
    PatternConfig config;
    config.kind = parsed.stage.value_or(3) == 3 ? PatternKind::zero3
                  : *parsed.stage == 2          ? PatternKind::zero2
                                                : PatternKind::zero1;
    config.model.layers = 2;
    config.model.hidden = 64;
    config.model.ffn = 128;
    config.model.vocabulary = 100;
    config.model.sequence = 16;
    config.layout.data = 2;
    config.layout.ranks_per_node = 2;
    config.zero = parsed.zero;
    build_schedule(config, 1);
  });
  return 0;
}
