// What bench-validate prints and writes, the same for a real job and a simulated cluster:
// the plan's figures, one FAIL line per faulty node, link or group with measured against
// expected, the per-node verdicts, and the exclude list as Slurm takes it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commbench/core/record.hpp"
#include "commbench/validate/validation_plan.hpp"

namespace commbench {

// The summary a user reads: plan size ("N rounds"), expectations, FAIL lines, notes,
// every node's verdict when there are at most `node_lines` nodes (the files always hold
// them), and the last lines "verdict: ..." and, when anything failed, "--exclude=HOSTLIST".
std::string validation_summary(const ValidationOutcome& outcome, const PlanSettings& settings,
                               std::size_t node_lines = 16);

// What the run will do and how long it may take, printed as it starts: "plan: 4 nodes, 3
// pair rounds, then re-tests and the collective over the nodes; a reading stops at 3x the
// time its expected rate needs (at least 1 s); at most 600 s (--time-limit) and the reading
// under way". No newline.
std::string validation_plan_text(const PlanSettings& settings, int nodes);

// The one line to paste into sbatch/srun: "--exclude=node[03,07-08]"; empty when none.
std::string exclude_option(const ValidationOutcome& outcome);

// 0 healthy, 1 anything failed, 4 the time limit cut the plan short with nothing failed;
// 128 + signal when SIGINT/SIGTERM stopped it (whatever was found before).
int validation_exit_code(const ValidationOutcome& outcome);

// Long form, one record of kind "check" per check: kind (node, intra, pair, group), phase,
// round, node_a, node_b, nodes (a hostlist), measured_gbps, expected_gbps, result (ok,
// slow, fail), reason. validation_csv is the same as a CSV text, header first.
std::vector<Record> validation_records(const ValidationOutcome& outcome);
std::string validation_csv(const ValidationOutcome& outcome);

// Everything in the CSV plus the plan's settings, counts, faults, notes and exclude list.
nlohmann::ordered_json validation_json(const ValidationOutcome& outcome, const PlanSettings& settings);

}  // namespace commbench
