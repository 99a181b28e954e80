// --threshold rules and --thresholds files. Whatever parses must be a rule the checker
// can apply: its bound finite and not negative, its size range not empty; applying it
// to a row must give a verdict, never a crash.
#include <cmath>

#include "commbench/validate/threshold_check.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commbench;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_value_or_usage_error([&] {
    const std::vector<ThresholdRule> rules = parse_threshold_rules(text, "--thresholds fuzz.txt");
    for (const ThresholdRule& rule : rules)
      if (!std::isfinite(rule.value) || rule.value < 0 || rule.min_bytes > rule.max_bytes) std::abort();

    ResultRow row;
    row.op_case.op = Collective::allreduce;
    row.op_case.redop = ReduceOp::sum;
    row.op_case.shape = shape_for(Collective::allreduce, 1 << 20, 4, 8);
    row.ranks = 8;
    row.busbw_gbps = 300;
    row.algbw_gbps = 171.4;
    row.time_us = 6.1;
    row.theoretical_busbw_gbps = 450;
    const std::string baseline_csv =
        "op,placement,dtype,redop,root,bytes,ranks,time_us,algbw_gbps,busbw_gbps\n"
        "allreduce,out,float,sum,,1048576,8,6,175,306\n";
    const ThresholdCheck check(rules, parse_baseline(baseline_csv, "--baseline b.csv"));
    const std::vector<std::string> failures = check.evaluate(row);
    if (row.threshold_passed && *row.threshold_passed != failures.empty()) std::abort();
    for (const std::string& failure : failures)
      if (failure.find('\n') != std::string::npos) std::abort();
  });
  return 0;
}
