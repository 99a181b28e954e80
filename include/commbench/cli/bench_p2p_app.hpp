// bench-p2p: bandwidth and latency of every pair of ranks, in rounds of disjoint pairs,
// each cell against its link's spec; names the outlier links and the slow ranks.
#pragma once

namespace commbench {

int run_bench_p2p(int argc, char** argv);

}  // namespace commbench
