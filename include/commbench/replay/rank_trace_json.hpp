// One rank's reading (RankTrace) as JSON text and back, every field of it and of its
// calls and steps: what the ranks of a job that divides the traces between them send to
// the rank that summarises. Doubles keep every bit (nlohmann writes the shortest text that
// reads back to the same double), so a reading sent is the reading made.
#pragma once

#include <string>
#include <string_view>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

std::string rank_trace_json(const RankTrace& trace);

// UsageError naming `where` for text that is not such a reading (not JSON, a field
// missing or of another type).
RankTrace rank_trace_from_json(std::string_view text, const std::string& where);

}  // namespace commbench
