// What a run was: the header of the console table and the provenance block of JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace commbench {

struct RunContext {
  std::string schema;   // "commbench.collectives/2": names the JSON document's layout
  std::string program;  // "bench-collectives"
  std::string version;
  std::string commit;
  std::string backend;
  std::string backend_version;
  std::string mpi_version;
  int ranks = 0;
  int nodes = 0;
  std::vector<std::string> rank_hosts;  // host of each rank
  std::vector<std::string> devices;     // "rank R: GPU ..." for each device, empty for host memory
  std::string command_line;
  std::string started_at;                                        // ISO 8601, UTC
  std::vector<std::pair<std::string, std::string>> settings;     // effective flags
  std::vector<std::pair<std::string, std::string>> environment;  // NCCL_*, UCX_*, OMPI_*, SLURM_*, ...
  // The Slurm job, step and nodes (report/scheduler_job.hpp); empty outside Slurm.
  std::vector<std::pair<std::string, std::string>> slurm;
  std::vector<std::string> notes;  // what was skipped or is unknown, and why
  // Lines the CSV begins with, each after "# " (a simulation says it is one).
  std::vector<std::string> csv_comments;
  // Names of the command's own row fields (ResultRow::extra), in CSV column order.
  std::vector<std::string> extra_columns;
  // The kind of the run's records (core/record.hpp): the CSV's columns and the JSON
  // document's array ("row" → "rows", "cell" → "cells", "check" → "checks").
  std::string record_kind = "row";
  // A run of several kinds (bench-patterns: "type" and "step"): the CSV holds them all,
  // told apart by a leading `record` column, and the JSON an array of each from the
  // start. Empty for a run of record_kind alone.
  std::vector<std::string> mixed_record_kinds;
  // The settings as constant columns after the records' own in the CSV (bench-patterns:
  // the CSVs of several runs concatenate and still say which run each line is of).
  bool settings_in_csv = false;
  // With settings_in_csv: the settings lead each line instead (bench-patterns --tune's
  // trials, whose CSV has always begun with the pattern's parameters).
  bool settings_lead_csv = false;
};

struct RunSummary {
  bool complete = true;  // false when the sweep stopped early
  // The phase a signal or a timeout stopped ("warm-up"): the JSON's interrupted_phase,
  // beside complete: false. Empty for a run that went to its end.
  std::string interrupted_phase;
  std::size_t rows = 0;
  // Wrong output elements over the checked rows; empty when no row was checked (--check off).
  std::optional<std::uint64_t> wrong_elements;
  std::vector<std::string> check_failures;
  std::size_t threshold_rows = 0;  // rows at least one threshold rule applied to
  std::vector<std::string> threshold_failures;
  // Over the rows with a busbw (has_bus_bandwidth), like nccl-tests' "Avg bus bandwidth";
  // empty when none has one (one rank).
  std::optional<double> average_busbw_gbps;
  int exit_code = 0;
  // The command's own top-level JSON keys after its records (p2p's rounds, validate's
  // plan and verdicts), in the document's order, each value as the document holds it. The
  // "summary" object above is the row kind's only.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> sections;
  // What the run learned after its files began (an interruption, the compute stand-in's
  // calibration): JSON appends them to provenance.notes.
  std::vector<std::string> notes;
  // Text the console prints after its summary (bench-collectives' rails table and its
  // notes); the files hold the same facts as records and notes.
  std::string console_text;
};

}  // namespace commbench
