// bench-replay's records (core/record.hpp): a "collective" for each class of calls and a
// "rank" for each rank's trace, and its console report.
#pragma once

#include <functional>

#include "commbench/core/record.hpp"
#include "commbench/replay/trace_summary.hpp"
#include "commbench/analysis/replay_fabric.hpp"

namespace commbench {

// `fabric`: the class's figures from --fabric, empty without.
Record traced_class_record(const TracedClass& c, const FabricFigure& fabric);
Record rank_trace_record(const RankTraceSummary& rank);
// Every class, then every rank, to `add`; `fabric` null without --fabric.
void add_replay_records(const std::function<void(const Record&)>& add, const TraceSummary& summary,
                        const FabricComparison* fabric);
void print_replay_report(const TraceSummary& summary, const FabricComparison* fabric);

}  // namespace commbench
