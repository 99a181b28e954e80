// The `provenance` object of every command's JSON: the same keys with the same meaning in
// bench-collectives, bench-topology and every later command, so one script reads where
// any result came from (docs/output-format.md, "Provenance").
#pragma once

#include <nlohmann/json.hpp>

#include "commbench/report/run_context.hpp"

namespace commbench {

// program, version, commit, command_line, started_at, backend, backend_version,
// mpi_version, ranks, nodes, rank_hosts, devices, settings, environment, notes. A command
// without a data plane (bench-topology) has null backend and backend_version.
nlohmann::ordered_json provenance_json(const RunContext& context);

}  // namespace commbench
