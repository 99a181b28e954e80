// micro-nic-counter-read: what one reading of a node's NIC counters costs, the work the
// `--nic-counters` sampler thread does every 10 ms (results/slurm-cluster/nic-sampler/).
// Run it where the ranks run, e.g. inside a test-cluster node:
//   scripts/slurm-cluster.sh exec cb-node1 build/bench/micro/micro-nic-counter-read
#include <benchmark/benchmark.h>

#include "commbench/topology/nic_counters.hpp"

namespace {

void read_every_counter(benchmark::State& state) {
  const commbench::NicCounterSources sources;
  std::size_t ports = 0;
  for (auto _ : state) {
    const commbench::NicCounterSnapshot snapshot = commbench::read_nic_counters(sources);
    ports = snapshot.nics.size();
    benchmark::DoNotOptimize(ports);
  }
  state.counters["ports"] = static_cast<double>(ports);
}
// CPU time is the cost to the node's cores; real time adds what the reads wait for.
BENCHMARK(read_every_counter)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
