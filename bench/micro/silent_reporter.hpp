// The reporter of every rank but 0: each rank runs every benchmark (the collectives
// need all of them), but one copy of the results is all anybody wants to read.
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

namespace commbench::micro {

class SilentReporter final : public benchmark::BenchmarkReporter {
 public:
  // Must say yes: a reporter that declines the context stops this rank from running
  // the benchmarks, and the other ranks would then wait in their first collective.
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace commbench::micro
