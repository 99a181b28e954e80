// bench-replay's reading divided between the ranks of the job it runs in (mpirun, srun):
// each rank reads its share of the torch.profiler traces, the readings (RankTrace, as
// rank_trace_json.hpp writes them) are gathered, and the reporting rank summarises them in
// the files' order, so the result is the one process's. Nsight Systems reports and
// DeepSpeed comms logs are read by the reporting rank alone, as by one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/replay/trace_inputs.hpp"

namespace commbench {

// Which rank reads each file, given the files' sizes: the largest first, each to the rank
// with the fewest bytes so far (the lowest rank among equals), so the ranks' shares differ
// by at most one file's size and every rank decides alike.
std::vector<int> readers_by_size(const std::vector<std::uint64_t>& sizes, int ranks);

// One rank's share of a divided reading and how long the rank took to read it.
struct ReadingShare {
  int rank = 0;
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // the process's CPU time: on a node shared with other work, its own part
};

struct DividedReading {
  ReadInput input;
  // The share that took longest, which the reading waited for; none where the reporting
  // rank read alone (reports, a comms log).
  std::optional<ReadingShare> slowest;
};

// read_traces(request) over the ranks of `world` (collective). The reporting rank (0)
// gets the reading; the others an empty ReadInput. A file that cannot be read ends every
// rank: the reporting rank throws the error the one process would have (the first bad
// file in the files' order), the others ReportedByAnotherRank with its exit code.
DividedReading read_traces_over(Bootstrap& world, const ReplayInputRequest& request);

}  // namespace commbench
