// Flags of bench-collectives, compatible with nccl-tests where nccl-tests has them.
// Parsing needs no MPI and no backend, so every usage error is found before either
// starts; checks that need the rank count happen in validate_for_ranks().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commbench/cli/command_shell.hpp"
#include "commbench/core/collective.hpp"
#include "commbench/core/dtype.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/reduce_op.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/core/sweep.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/validate/threshold_rule.hpp"

namespace commbench {

// --nic-counters: automatic reads them when the job spans more than one node.
enum class NicCounting { automatic, on, off };

// The defaults are those of a command line without flags (the help shows them).
struct CollectivesOptions {
  std::vector<Collective> ops{Collective::allreduce, Collective::allgather, Collective::reducescatter,
                              Collective::broadcast};
  std::vector<DataType> dtypes{DataType::float32};
  bool dtypes_all = false;  // "-d all": drop what the backend cannot do instead of failing
  std::vector<ReduceOp> redops{ReduceOp::sum};
  bool redops_all = false;
  std::vector<Placement> placements{Placement::out_of_place};
  PeerDistribution alltoallv_distribution;  // --alltoallv-distribution
  SweepSpec sweep;
  StoppingCriteria stopping;
  std::uint64_t warmup_iterations = 1;
  std::optional<double> batch_seconds;  // --batch-time; unset: default_batch_seconds(backend)
  bool check = false;
  int root = 0;
  int gpus_per_process = 1;                 // -g (nccl)
  bool register_buffers = false;            // --register (nccl)
  std::uint64_t cuda_graph_iterations = 0;  // -G (nccl)
  bool blocking = false;                    // -z (nccl)
  JobOptions job;                           // --backend, -T/--timeout (one step), --csv, --json, --force
  OutputFormat stdout_format = OutputFormat::table;
  // Pass/fail rules (--threshold, parsed here) and the files read once the job runs
  // (--thresholds, --baseline), where the watchdog covers a file that never delivers.
  std::vector<ThresholdRule> threshold_rules;
  std::string thresholds_path;
  std::string baseline_path;
  int debug_corrupt_rank = -1;
  // --profile-range [TEXT]: the cases whose timed batches the profiler captures (all when "")
  std::optional<std::string> profile_range;
  NicCounting nic_counters = NicCounting::automatic;  // --nic-counters
  double nic_fraction = 0.7;                          // --nic-fraction
  double soak_seconds = 0;                            // --soak (0: one pass over the cases)
  double soak_interval_seconds = 1;                   // --soak-interval

  // The result outputs this run asks for (--csv, --json, --format, --force).
  OutputRequest outputs() const { return file_outputs(job.files, stdout_format); }
  // The effective values, for headers and provenance.
  std::vector<std::pair<std::string, std::string>> describe() const;
};

inline constexpr const char* kCollectivesDescription =
    "bench-collectives: sweep collective operations over message sizes and report time, algbw and busbw.\n"
    "Run it under mpirun or srun, one rank per GPU (nccl) or per core (mpi).";

// Declares every flag on `app`, parsed into `options` (the shared groups of
// command_shell.hpp included).
void add_collectives_options(CLI::App& app, CollectivesOptions& options);
// What involves more than one flag; UsageError naming them.
void validate_collectives_options(const CLI::App& app, CollectivesOptions& options);

// The same flags parsed alone, as the command parses them (for tests and tools).
struct ParsedCommandLine {
  std::optional<CollectivesOptions> options;  // empty when help or version was asked for
  std::string text_to_print;                  // the help or version text
  bool version_requested = false;
};

// Throws UsageError with a one-line message naming the flag.
ParsedCommandLine parse_collectives_command_line(int argc, const char* const* argv);

// Checks that need the number of ranks (-r/--root).
void validate_for_ranks(const CollectivesOptions& options, int ranks);

}  // namespace commbench
