// Which calls of the ranks' traces are one collective. Traces of one window line up one
// to one: the k-th call of every rank is one call. Profilers started at different steps,
// or calls issued from several threads, do not: the ranks are then matched on the calls
// they share, each thread's calls against the other rank's thread that shares the most,
// by the longest common run of calls of one operation and size (an all-to-all's size is
// its rank's own, so all-to-alls are matched by operation alone). Where every call carries
// PyTorch's sequence number in its process group (record_param_comms' "Seq", written by
// releases after 2026-03), the calls are matched on it instead.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

struct MatchedCalls {
  // One row per call the ranks share, in the first trace's call order: each trace's index
  // into its own collectives, in the order of the traces given.
  std::vector<std::vector<std::size_t>> rows;
  bool one_to_one = true;          // every trace's calls line up, all of them
  std::vector<std::string> notes;  // what was matched, where not one to one
};

// UsageError (exit 2) when some trace shares no call with the first.
MatchedCalls match_calls(const std::vector<RankTrace>& traces);

}  // namespace commbench
