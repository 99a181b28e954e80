#include "commbench/cli/collectives_options.hpp"
#include "commbench/runner/batch_length.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "command_line_parser.hpp"

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

using NamedFormat = detail::NamedValue<OutputFormat>;
constexpr std::array kFormatNames{NamedFormat{"table", OutputFormat::table}, NamedFormat{"csv", OutputFormat::csv},
                                  NamedFormat{"json", OutputFormat::json}};

std::string format_names() { return detail::listed_names<OutputFormat>(kFormatNames); }

template <typename T>
std::string names_of(const std::vector<T>& values) {
  std::string text;
  for (const T& v : values) text += (text.empty() ? "" : ",") + std::string(name_of(v));
  return text;
}

// Whether any of `ops` splits per peer (alltoallv), so --alltoallv-distribution applies.
bool any_split_per_peer(const std::vector<Collective>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](Collective op) { return descriptor_of(op).split_per_peer(); });
}

// -d and -o: names or "all"; "all" also tells the run to drop what the backend cannot do
// instead of failing, so `all` records whether it was asked for.
template <typename Enum>
void add_name_list(CLI::App& app, const std::string& names, std::vector<Enum>& values, bool& all,
                   std::vector<Enum> (*parse_list)(std::string_view, std::string_view),
                   const std::string& description) {
  add_named_option(
      app, names,
      [&values, &all, parse_list](const std::string& text, const char* flag) {
        values = parse_list(text, flag);
        all = detail::lower_case(text) == "all";
      },
      description)
      ->type_name("LIST")
      ->default_str(names_of(values));
}

// --max-time-per-size and --batch-time: a positive number of seconds.
double parse_positive_seconds(const std::string& text, const char* flag) {
  const double seconds = parse_number(text, flag, false);
  if (!(seconds > 0)) throw UsageError(fmt::format("{}: must be a positive number of seconds", flag));
  return seconds;
}

// --op, --alltoallv-distribution and the sizes of the sweep.
void add_sweep_options(CLI::App& app, CollectivesOptions& options) {
  add_parsed_option(
      app, "--op", options.ops, parse_collective_list,
      "Collectives, comma-separated: " + accepted_collective_names() + "; all is every one but alltoallv", "LIST")
      ->default_str(names_of(options.ops));
  add_parsed_option(
      app, "--alltoallv-distribution", options.alltoallv_distribution, parse_peer_distribution,
      "alltoallv: how each rank's data splits over the destination ranks (MoE token routing): uniform, "
      "zipf:S (rank d gets a share ~ 1/(d+1)^S) or hot:F (rank 0 gets fraction F); the size is what "
      "each rank sends in all",
      "DISTRIBUTION")
      ->default_str(to_string(options.alltoallv_distribution));
  add_parsed_option(app, "-b,--min-bytes,--minbytes", options.sweep.min_bytes, parse_size,
                    "Smallest size (K/M/G/T binary suffixes, 1K = 1024)", "SIZE")
      ->default_str(format_size(options.sweep.min_bytes));
  add_parsed_option(app, "-e,--max-bytes,--maxbytes", options.sweep.max_bytes, parse_size, "Largest size", "SIZE")
      ->default_str(format_size(options.sweep.max_bytes));
  auto* factor_option = add_parsed_option(
      app, "-f,--step-factor,--stepfactor", options.sweep.step_factor,
      [](const std::string& text, const char* flag) { return parse_number(text, flag, false); },
      "Multiply the size by this factor each step", "NUMBER");
  factor_option->default_str(significant_text(options.sweep.step_factor));
  add_parsed_option(app, "-i,--step-bytes,--stepbytes", options.sweep.step_bytes, parse_size,
                    "Add this many bytes each step (linear sweep)", "SIZE")
      ->excludes(factor_option);
}

// -n, -w and -c; -d, -o, -r: how each case runs and what it is made of.
void add_case_options(CLI::App& app, CollectivesOptions& options) {
  add_parsed_option(app, "-n,--iters", options.stopping.fixed_iterations, count_at_least(1),
                    "Timed iterations per size (fixed); default: adaptive", "N");
  // -w as every command spells it (command_shell.hpp), nccl-tests' --warmup_iters kept.
  add_parsed_option(app, "-w,--warmup,--warmup-iters,--warmup_iters", options.warmup_iterations,
                    count_at_least(0), "Warm-up iterations per size", "N")
      ->default_str(std::to_string(options.warmup_iterations));
  add_zero_or_one_switch(app, "-c,--check", options.check, "Check every output element");
  add_name_list(app, "-d,--dtype,--datatype", options.dtypes, options.dtypes_all, parse_data_type_list,
                "Element types, comma-separated: " + accepted_data_type_names());
  add_name_list(app, "-o,--redop", options.redops, options.redops_all, parse_reduce_op_list,
                "Reductions, comma-separated: " + accepted_reduce_op_names());
  add_parsed_option(
      app, "-r,--root", options.root,
      [](const std::string& text, const char* flag) { return static_cast<int>(parse_count(text, flag, 0)); },
      "Root rank of broadcast and reduce", "RANK")
      ->default_str(std::to_string(options.root));
}

// -T, --backend, the NCCL backend's own flags (nccl-tests' spellings kept) and --placement.
void add_backend_options(CLI::App& app, CollectivesOptions& options) {
  add_timeout_option(app, options.job.timeout_seconds, "one step");
  add_backend_option(app, options.job.backend);
  add_parsed_option(
      app, "-g,--gpus-per-process,--ngpus", options.gpus_per_process,
      [](const std::string& text, const char* flag) {
        const std::uint64_t gpus = parse_count(text, flag, 1);
        if (gpus > 1024) throw UsageError(fmt::format("{}: at most 1024 (got {})", flag, text));
        return static_cast<int>(gpus);
      },
      "nccl: GPUs driven by each process (one NCCL rank each)", "N")
      ->default_str(std::to_string(options.gpus_per_process));
  app.add_flag("--register", options.register_buffers,
               "nccl: allocate with ncclMemAlloc and register with ncclCommRegister");
  add_parsed_option(app, "-G,--cuda-graph,--cudagraph", options.cuda_graph_iterations,
                    count_at_least(0),
                    "nccl: capture N operations in a CUDA graph and replay it; 0 = off", "N")
      ->default_str(std::to_string(options.cuda_graph_iterations));
  add_zero_or_one_switch(app, "-z,--blocking", options.blocking,
                         "nccl: synchronise after every operation");
  add_parsed_option(
      app, "--placement", options.placements, parse_placements,
      "Buffers: out (out-of-place), in (in-place) or both", "NAME")
      ->default_str(names_of(options.placements));
}

// The result files, what stdout shows, and the pass/fail rules.
void add_output_options(CLI::App& app, CollectivesOptions& options) {
  add_result_file_options(app, options.job.files, "Write rows to this CSV file as they are measured",
                          "Write rows and provenance to this JSON file at the end");
  add_parsed_option(
      app, "--format", options.stdout_format,
      [](const std::string& text, const char* flag) {
        return detail::lookup_name<OutputFormat>(kFormatNames, text, flag, format_names());
      },
      "What stdout shows, one of: " + format_names(), "NAME")
      ->default_str("table");
  add_repeatable_option(
      app, "--threshold",
      [&options](const std::string& text, const char* flag) {
        options.threshold_rules.push_back(parse_threshold_rule(text, flag));
      },
      "Pass/fail rule, repeatable: [OPS][@SIZES]:METRIC>=VALUE, e.g. 'allreduce@64M..:busbw>=300' or "
      "'busbw>=0.9*baseline'; a failed rule makes the exit code 1 (docs/thresholds.md)",
      "RULE");
  add_parsed_option(app, "--thresholds", options.thresholds_path, non_empty_file_name,
                    "File of threshold rules, one per line ('#' starts a comment)", "FILE");
  add_parsed_option(app, "--baseline", options.baseline_path, non_empty_file_name,
                    "CSV of an earlier run (--csv) that rules with 'baseline' compare against, row by row", "FILE");
}

// The adaptive stopping rule, the batch length, the profiler's range and a testing aid.
void add_adaptive_options(CLI::App& app, CollectivesOptions& options) {
  add_parsed_option(app, "--max-time-per-size", options.stopping.max_seconds, parse_positive_seconds,
                    "Adaptive mode: stop timing a size after this many seconds (the --min-samples floor comes first)",
                    "SECONDS")
      ->default_str(significant_text(options.stopping.max_seconds));
  add_parsed_option(
      app, "--target-noise", options.stopping.target_noise,
      [](const std::string& text, const char* flag) {
        const double percent = parse_number(text, flag, true);
        if (!(percent > 0) || percent >= 100)
          throw UsageError(fmt::format("{}: must be a percentage between 0 and 100 (got {})", flag, text));
        return percent / 100.0;
      },
      "Adaptive mode: stop once the noise of the measured time (relative standard error of the mean "
      "per-iteration time) is at or below this many percent",
      "PERCENT")
      ->default_str(significant_text(options.stopping.target_noise * 100.0));
  add_parsed_option(app, "--min-samples", options.stopping.min_samples, count_at_least(1),
                    "Adaptive mode: timed batches per size at least", "N")
      ->default_str(std::to_string(options.stopping.min_samples));
  add_parsed_option(app, "--batch-time", options.batch_seconds, parse_positive_seconds,
                    "Seconds one timed batch of back-to-back operations lasts at least; each batch is one sample",
                    "SECONDS")
      ->default_str(fmt::format("{} (nccl), {} (mpi)", significant_text(default_batch_seconds("nccl")),
                                significant_text(default_batch_seconds("mpi"))));
  app.add_option("--profile-range", options.profile_range,
                 "Open the profiler's capture range (cudaProfilerStart/Stop, for nsys "
                 "--capture-range=cudaProfilerApi) around the timed batches of each case whose name contains "
                 "TEXT ('allreduce 64MiB'); every case when TEXT is left out (docs/profiling.md)")
      ->expected(0, 1)
      ->default_str("")
      ->type_name("[TEXT]");
  // Testing aid: proves that --check catches corruption (damages one element on a rank).
  app.add_option("--debug-corrupt-rank", options.debug_corrupt_rank)->group("");
}

void add_nic_options(CLI::App& app, CollectivesOptions& options) {
  add_parsed_option(
      app, "--nic-counters", options.nic_counters,
      [](const std::string& text, const char* flag) {
        if (text == "auto") return NicCounting::automatic;
        if (text == "on") return NicCounting::on;
        if (text == "off") return NicCounting::off;
        throw UsageError(fmt::format("{}: expected auto, on or off (got {})", flag, text));
      },
      "Read every node's NIC counters around each case (bytes per NIC, busiest rate, the rails table); auto: "
      "when the job spans more than one node",
      "auto|on|off")
      ->default_str("auto");
  add_parsed_option(
      app, "--nic-fraction", options.nic_fraction,
      [](const std::string& text, const char* flag) {
        const double fraction = parse_number(text, flag, false);
        if (!(fraction > 0) || fraction >= 1)
          throw UsageError(fmt::format("{}: must be between 0 and 1 (got {})", flag, text));
        return fraction;
      },
      "Flag a rail that carried less than this fraction of the median rail's bytes, or whose busiest interval "
      "stayed below this fraction of the median rail's",
      "FRACTION")
      ->default_str(significant_text(options.nic_fraction));
}

void add_soak_options(CLI::App& app, CollectivesOptions& options) {
  add_parsed_option(
      app, "--soak", options.soak_seconds, parse_duration_seconds,
      "Run the cases again and again for this long (90s, 20m, 2h), one pass per interval, and report every dip "
      "of a case's busbw with when it began and ended (docs/collectives.md, \"Soak\")",
      "DURATION");
  add_parsed_option(
      app, "--soak-interval", options.soak_interval_seconds, parse_duration_seconds,
      "With --soak: seconds from one pass's start to the next, at least", "SECONDS")
      ->default_str("1");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CollectivesOptions::describe() const {
  std::vector<std::pair<std::string, std::string>> settings;
  settings.emplace_back("ops", names_of(ops));
  settings.emplace_back("dtypes", names_of(dtypes));
  settings.emplace_back("redops", names_of(redops));
  settings.emplace_back("placement", names_of(placements));
  if (any_split_per_peer(ops)) settings.emplace_back("alltoallv_distribution", to_string(alltoallv_distribution));
  settings.emplace_back("min_bytes", std::to_string(sweep.min_bytes));
  settings.emplace_back("max_bytes", std::to_string(sweep.max_bytes));
  if (sweep.step_bytes != 0)
    settings.emplace_back("step_bytes", std::to_string(sweep.step_bytes));
  else
    settings.emplace_back("step_factor", significant_text(sweep.step_factor));
  settings.emplace_back("iters", stopping.fixed_iterations ? std::to_string(stopping.fixed_iterations) : "adaptive");
  settings.emplace_back("warmup_iters", std::to_string(warmup_iterations));
  if (stopping.fixed_iterations == 0) {
    settings.emplace_back("target_noise_pct", significant_text(stopping.target_noise * 100.0));
    settings.emplace_back("max_time_per_size_s", significant_text(stopping.max_seconds));
    settings.emplace_back("min_samples", std::to_string(stopping.min_samples));
    settings.emplace_back("batch_time_s", batch_seconds ? significant_text(*batch_seconds) : "backend default");
  }
  settings.emplace_back("check", check ? "1" : "0");
  settings.emplace_back("root", std::to_string(root));
  settings.emplace_back("timeout_s", significant_text(job.timeout_seconds));
  if (gpus_per_process != 1) settings.emplace_back("gpus_per_process", std::to_string(gpus_per_process));
  if (register_buffers) settings.emplace_back("register", "1");
  if (cuda_graph_iterations != 0) settings.emplace_back("cuda_graph", std::to_string(cuda_graph_iterations));
  if (blocking) settings.emplace_back("blocking", "1");
  std::string rules;
  for (const ThresholdRule& rule : threshold_rules) rules += (rules.empty() ? "" : " ; ") + rule.text;
  if (!rules.empty()) settings.emplace_back("threshold", rules);
  if (!thresholds_path.empty()) settings.emplace_back("thresholds", thresholds_path);
  if (!baseline_path.empty()) settings.emplace_back("baseline", baseline_path);
  if (nic_counters != NicCounting::automatic)
    settings.emplace_back("nic_counters", nic_counters == NicCounting::on ? "on" : "off");
  if (soak_seconds > 0) {
    settings.emplace_back("soak_s", significant_text(soak_seconds));
    settings.emplace_back("soak_interval_s", significant_text(soak_interval_seconds));
  }
  return settings;
}

void add_collectives_options(CLI::App& app, CollectivesOptions& options) {
  // Every value is parsed as CLI11 meets it, by the parser whose message names the flag;
  // the targets start at the defaults, which the help shows as a user would type them.
  add_sweep_options(app, options);
  add_case_options(app, options);
  add_backend_options(app, options);
  add_output_options(app, options);
  add_adaptive_options(app, options);
  add_nic_options(app, options);
  add_soak_options(app, options);
}

void validate_collectives_options(const CLI::App& app, CollectivesOptions& options) {
  if (app.count("--alltoallv-distribution") > 0 && !any_split_per_peer(options.ops))
    throw UsageError("--alltoallv-distribution: applies to alltoallv only, which --op does not name");
  validate(options.sweep);
  if (options.blocking && options.cuda_graph_iterations > 0)
    throw UsageError("-z/--blocking: cannot be combined with -G/--cuda-graph (a graph replays without host syncs)");
  if (app.count("--soak-interval") > 0 && options.soak_seconds == 0)
    throw UsageError("--soak-interval: applies to --soak only");
}

ParsedCommandLine parse_collectives_command_line(int argc, const char* const* argv) {
  CLI::App app{kCollectivesDescription};
  app.name("bench-collectives");
  CollectivesOptions options;
  add_collectives_options(app, options);
  const CommandLineOutcome outcome = parse_command_line(app, argc, argv, "bench-collectives");
  if (outcome.request != CommandLineRequest::run)
    return ParsedCommandLine{std::nullopt, outcome.text, outcome.request == CommandLineRequest::version};
  validate_collectives_options(app, options);
  check_distinct_outputs(options.job.files.csv_path, options.job.files.json_path);
  return ParsedCommandLine{options, ""};
}

void validate_for_ranks(const CollectivesOptions& options, int ranks) {
  bool rooted = false;
  for (Collective op : options.ops) rooted = rooted || has_root(op);
  if (options.root >= ranks)
    throw UsageError(fmt::format("-r/--root: {} is outside [0, {}){}", options.root, ranks,
                                 rooted ? "" : " (it would apply to broadcast and reduce)"));
  if (options.debug_corrupt_rank >= ranks) throw UsageError("--debug-corrupt-rank: outside [0, ranks)");
}

}  // namespace commbench
