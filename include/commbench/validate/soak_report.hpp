// What bench-validate --soak prints and writes: the steady level and the rule, one line
// per event (FAIL or PASS, node or link, from when to when, how deep, what changed at the
// same time), counter changes no event explains, each node's verdict and the exclude list.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commbench/core/record.hpp"
#include "commbench/validate/soak_run.hpp"

namespace commbench {

// "2026-11-27T23:50:01.2Z": `seconds` after `started_unix` (seconds since 1970, UTC).
std::string utc_text(double started_unix, double seconds);

std::string soak_summary(const SoakOutcome& outcome, const SoakSettings& settings, double started_unix,
                         std::size_t node_lines = 16);

// Per node: "ok", or why it fails ("dipped with 3 partners from 20.1 s to 35.2 s").
std::vector<std::string> soak_node_verdicts(const SoakOutcome& outcome);

// One interval's records (kind "interval"): its pair readings, then its changes.
std::vector<Record> soak_interval_records(const SoakInterval& interval, const std::vector<std::string>& node_names);
// The events' records (kind "event").
std::vector<Record> soak_event_records(const SoakOutcome& outcome, double started_unix);

// The JSON document's sections after the records: soak, nodes, excluded, exclude_option,
// complete, exit_code, interrupted_by.
nlohmann::ordered_json soak_json(const SoakOutcome& outcome, const SoakSettings& settings, double started_unix);

}  // namespace commbench
