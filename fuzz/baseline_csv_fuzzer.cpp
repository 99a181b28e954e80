// --baseline files: any bytes a user (or a truncated copy) may hand over. A file either
// becomes a baseline whose every value is one commbench could have written, or a
// one-line UsageError.
#include <cmath>

#include "commbench/validate/baseline.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] {
    const commbench::Baseline baseline = commbench::parse_baseline(text, "--baseline fuzz.csv");
    if (baseline.rows.empty()) std::abort();
    for (const auto& [key, row] : baseline.rows) {
      if (key.bytes == 0 || key.ranks < 1 || row.line < 2) std::abort();
      for (double v : {row.time_us, row.algbw_gbps, row.busbw_gbps})
        if (!std::isfinite(v) || v < 0) std::abort();
      if (baseline.find(key) != &row) std::abort();
    }
  });
  return 0;
}
