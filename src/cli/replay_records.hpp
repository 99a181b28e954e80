// bench-replay's records (core/record.hpp): a "collective" for each class of calls and a
// "rank" for each rank's trace, and its console report.
#pragma once

#include <functional>

#include "commbench/core/record.hpp"
#include "commbench/replay/trace_summary.hpp"

namespace commbench {

Record traced_class_record(const TracedClass& c);
Record rank_trace_record(const RankTraceSummary& rank);
// Every class, then every rank, to `add`.
void add_replay_records(const std::function<void(const Record&)>& add, const TraceSummary& summary);
void print_replay_report(const TraceSummary& summary);

}  // namespace commbench
