// --from and --fabric files (bench-collectives' CSV or JSON): any bytes a user may hand
// over. A file either becomes a cost model whose every answer is a finite, non-negative
// time, or a one-line UsageError.
#include <cmath>

#include "commbench/analysis/sweep_cost_model.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] {
    const commbench::SweepCostModel model(text, "--fabric fuzz.json");
    for (const commbench::Collective op : {commbench::Collective::allreduce, commbench::Collective::allgather})
      for (const std::uint64_t bytes : {1ull, 4096ull, 1ull << 30})
        for (const int ranks : {2, 8}) {
          const double seconds = model.seconds({commbench::StepKind::collective, op, bytes, ranks, 1});
          if (!(seconds >= 0) || std::isinf(seconds)) std::abort();
        }
  });
  return 0;
}
