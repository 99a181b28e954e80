// The rank the others waited for: the one whose lateness cost them the most waiting, not
// the one last most often (DDP's buckets after the first can find a late rank's wait
// already served). Named when its lateness caused most of the job's waiting, at two calls
// or more, beyond the arrival noise (its lateness over twice the other ranks' own spread
// about their median; of two ranks, where one is always last, at 90 % of 10 calls or more)
// and at a tenth of a step or more, where the traces have steps: on a busy host every
// rank's arrival wanders by some milliseconds, and a rank a few of them late is no finding.
#pragma once

#include <vector>

#include "commbench/replay/trace_summary.hpp"

namespace commbench {

// Sets summary.straggler and summary.verdict from the ranks' waiting caused, last arrivals
// and lateness; `spread_seconds`: per rank, the other ranks' spread summed over the calls
// it arrived last at (CallTiming::spread).
void judge_straggler(TraceSummary& summary, const std::vector<double>& spread_seconds);

}  // namespace commbench
