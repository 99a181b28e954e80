#include "commbench/cli/bench_validate_app.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/analysis/job_cluster_probe.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/cli/validate_soak.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/size.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/validate/simulated_cluster.hpp"
#include "commbench/validate/site_expectations.hpp"
#include "commbench/validate/validation_plan.hpp"
#include "commbench/validate/validation_report.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-validate";
constexpr const char* kSchema = "commbench.validate/1";
constexpr std::uint64_t kMostSimulatedNodes = 65536;

struct ValidateOptions {
  JobOptions job;
  PlanSettings plan;
  MeasurementOptions counts{10, 2};  // -n/-w, copied into `measurement`
  ProbeMeasurement measurement;
  std::string expect_path;
  // --simulate: no job, a modelled cluster.
  int simulate_nodes = 0;
  std::string degrade;
  double degrade_factor = 0.25;
  double noise = 0.03;
  // --soak: the pair rounds repeated for this long (0: the plan instead).
  SoakSettings soak;

  std::vector<std::pair<std::string, std::string>> describe() const {
    if (soak.duration_s > 0)
      return {{"soak_s", significant_text(soak.duration_s)},
              {"soak_interval_s", significant_text(soak.interval_s)},
              {"seed", std::to_string(plan.seed)},
              {"fraction", significant_text(plan.expect.fraction)},
              {"expect", expect_path.empty() ? "steady level of the run" : expect_path},
              {"bytes", std::to_string(measurement.pair_bytes)},
              {"iters", std::to_string(measurement.iterations)},
              {"warmup_iters", std::to_string(measurement.warmup)},
              {"check", measurement.check ? "1" : "0"},
              {"timeout_s", significant_text(job.timeout_seconds)}};
    return {{"rounds", std::to_string(plan.pair_rounds)},
            {"seed", std::to_string(plan.seed)},
            {"fraction", significant_text(plan.expect.fraction)},
            {"expect", expect_path.empty() ? "majority" : expect_path},
            {"time_limit_s", significant_text(plan.time_limit_seconds)},
            {"collectives", plan.group_collectives ? "1" : "0"},
            {"bytes", std::to_string(measurement.pair_bytes)},
            {"collective_bytes", std::to_string(measurement.collective_bytes)},
            {"iters", std::to_string(measurement.iterations)},
            {"warmup_iters", std::to_string(measurement.warmup)},
            {"check", measurement.check ? "1" : "0"},
            {"timeout_s", significant_text(job.timeout_seconds)}};
  }
};

double parse_fraction(const std::string& text, const char* flag) {
  const double fraction = parse_number(text, flag, false);
  if (!(fraction > 0 && fraction < 1))
    throw UsageError(std::string(flag) + ": '" + excerpt(text) + "' is not in (0, 1)");
  return fraction;
}

void add_plan_options(CLI::App& app, ValidateOptions& options) {
  add_parsed_option(
      app, "--rounds", options.plan.pair_rounds,
      [](const std::string& text, const char* flag) { return static_cast<int>(parse_count(text, flag, 2)); },
      "Pair rounds before re-tests: each node meets this many different partners (at least 2)", "K")
      ->default_str(std::to_string(options.plan.pair_rounds));
  add_parsed_option(
      app, "--seed", options.plan.seed, count_at_least(0),
      "Seed of the node shuffle behind the pair rounds (recorded, so a run can be repeated)", "N")
      ->default_str("1");
  add_parsed_option(
      app, "--fraction", options.plan.expect.fraction, parse_fraction,
      "A figure below this fraction of its expected value fails (docs/validate.md says why 0.75)", "F")
      ->default_str(significant_text(options.plan.expect.fraction));
  add_parsed_option(
      app, "--expect", options.expect_path, non_empty_file_name,
      "Site file of expected figures and node facts (docs/validate.md); default: the majority of the nodes", "FILE");
  // A callback rather than CLI11's "!--no-collectives" negation, whose help reads
  // "--no-collectives{false}".
  app.add_flag_callback(
      "--no-collectives", [&options] { options.plan.group_collectives = false; },
      "Skip the collective over every node (and its bisection)");
  add_parsed_option(
      app, "--time-limit", options.plan.time_limit_seconds, parse_timeout_seconds,
      "Seconds the whole plan may take; at the limit it reports what it knows (exit 4 if nothing "
      "failed); 0 disables",
      "SECONDS")
      ->default_str("600");
}

void add_probe_options(CLI::App& app, ValidateOptions& options) {
  add_parsed_option(
      app, "-b,--bytes", options.measurement.pair_bytes, parse_size,
      "Message size of the pair rounds (binary units: 64M = 67108864)", "SIZE")
      ->default_str("64M");
  add_parsed_option(
      app, "--collective-bytes", options.measurement.collective_bytes, parse_size,
      "Allreduce size inside nodes and over node groups", "SIZE")
      ->default_str("64M");
  add_measurement_options(app, options.counts, "Timed iterations per measurement", "Iterations before timing");
  app.add_flag("-c,--check", options.measurement.check, "Check every received byte once per measurement");
}

void add_simulation_options(CLI::App& app, ValidateOptions& options) {
  add_parsed_option(
      app, "--simulate", options.simulate_nodes,
      [](const std::string& text, const char* flag) {
        // The simulation keeps every node's name and figures: past this it is memory, not a plan.
        const std::uint64_t nodes = parse_count(text, flag, 1);
        if (nodes > kMostSimulatedNodes)
          throw UsageError(
              fmt::format("{}: {} nodes is more than the {} a simulation takes", flag, nodes, kMostSimulatedNodes));
        return static_cast<int>(nodes);
      },
      "Run the plan on a modelled cluster of N nodes instead of the job (no processes)", "N");
  add_parsed_option(
      app, "--degrade", options.degrade,
      [](const std::string& text, const char* flag) {
        if (text.empty()) throw UsageError(fmt::format("{}: empty (give node:K or link:A-B)", flag));
        return text;
      },
      "With --simulate: node:K (node K slow with every partner), link:A-B (one pair slow), each with an optional "
      "@F (what is left, default --degrade-factor) and, with --soak, /FROM-UNTIL (the seconds it holds), "
      "comma-separated",
      "SPEC");
  add_parsed_option(
      app, "--degrade-factor", options.degrade_factor, parse_fraction,
      "With --simulate: what a degraded node or link keeps of its bandwidth", "F")
      ->default_str("0.25");
  add_parsed_option(
      app, "--noise", options.noise,
      [](const std::string& text, const char* flag) {
        const double noise = parse_number(text, flag, false);
        if (!(noise >= 0 && noise <= 0.5))
          throw UsageError(fmt::format("{}: '{}' is not in [0, 0.5]", flag, excerpt(text)));
        return noise;
      },
      "With --simulate: relative standard deviation of every modelled figure", "SD")
      ->default_str("0.03");
}

void add_soak_options(CLI::App& app, ValidateOptions& options) {
  options.soak.duration_s = 0;
  add_parsed_option(
      app, "--soak", options.soak.duration_s, parse_duration_seconds,
      "Instead of the plan, repeat pair rounds for this long (90s, 20m, 2h) and report every dip of a node or "
      "link with when it began and ended (docs/validate.md, \"Soak runs\")",
      "DURATION");
  add_parsed_option(
      app, "--soak-interval", options.soak.interval_s, parse_duration_seconds,
      "With --soak: seconds from one pair round's start to the next, at least", "SECONDS")
      ->default_str("1");
}

void add_validate_options(CLI::App& app, ValidateOptions& options) {
  options.plan.time_limit_seconds = 600;
  add_plan_options(app, options);
  add_soak_options(app, options);
  add_probe_options(app, options);
  add_simulation_options(app, options);
  add_job_options(app, options.job, "one measurement",
                  "Write one row per check (node verdicts, pairs, groups) to this CSV file",
                  "Write the plan, every figure, the verdicts and the exclude list to this JSON file");
}

void validate_validate_options(const CLI::App& app, ValidateOptions& options) {
  options.measurement.iterations = options.counts.iterations;
  options.measurement.warmup = options.counts.warmup;
  if (options.soak.duration_s > 0) {
    for (const char* flag : {"--rounds", "--time-limit", "--no-collectives", "--collective-bytes"})
      if (app.count(flag) > 0)
        throw UsageError(std::string(flag) + ": does not apply to --soak (it repeats pair rounds for its duration)");
    options.soak.seed = options.plan.seed;
    options.soak.rule.fraction = options.plan.expect.fraction;
  } else if (app.count("--soak-interval") > 0) {
    throw UsageError("--soak-interval: applies to --soak only");
  }
  if (options.simulate_nodes == 0) {
    for (const char* flag : {"--degrade", "--degrade-factor", "--noise"})
      if (app.count(flag) > 0) throw UsageError(std::string(flag) + ": applies to --simulate only");
  }
}

// The site file's expectations into the plan and the node checks.
void apply_site_file(ValidateOptions& options, const std::string& text) {
  const SiteExpectations site = parse_site_expectations(text, "--expect " + options.expect_path);
  options.plan.expect.pair_gbps = site.pair_gbps;
  options.soak.rule.steady_gbps = site.pair_gbps;
  options.plan.expect.intra_busbw_gbps = site.intra_busbw_gbps;
  options.plan.expect.group_busbw_gbps = site.group_busbw_gbps;
  options.measurement.expected_facts = site.facts;
}

// --expect is a file of the reporting rank's node, as result files are: read there alone
// (the other nodes need not have it) and handed to every rank. Two steps, so a file that
// cannot be read ends every rank with its one line before any of them waits for it.
ValidateOptions with_site_file(const ValidateOptions& options, JobSession& session) {
  ValidateOptions resolved = options;
  if (options.expect_path.empty()) return resolved;
  std::string text;
  session.step("reading --expect", [&] {
    if (session.reporting()) text = read_input_file(options.expect_path, "--expect " + options.expect_path);
  });
  session.step("parsing --expect", [&] { apply_site_file(resolved, broadcast_as(session.world(), text, 0)); });
  return resolved;
}

// A simulation's files, through the reporters a plan in a job writes with: its checks, then
// the modelled cluster and the plan's sections.
void write_simulation_results(const ValidateOptions& options, const ValidationOutcome& outcome, RunContext context,
                              const nlohmann::ordered_json& simulation) {
  if (options.job.files.csv_path.empty() && options.job.files.json_path.empty()) return;
  context.record_kind = "check";
  context.csv_comments = {fmt::format("simulated: {}", count_text(options.simulate_nodes, "node"))};
  ReporterSet reporters = ReporterSet::open(file_outputs(options.job.files));
  reporters.begin(context);
  for (const Record& record : validation_records(outcome)) reporters.add_record(record);
  RunSummary summary;
  summary.complete = outcome.complete;
  summary.exit_code = validation_exit_code(outcome);
  summary.sections.emplace_back("simulation", simulation);
  const nlohmann::ordered_json sections = validation_json(outcome, options.plan);
  for (const auto& [key, value] : sections.items()) summary.sections.emplace_back(key, value);
  reporters.finish(summary);
}

// A fault's time window is a soak's: without one, or past its end, the fault would never
// hold while the header says the cluster is degraded.
void refuse_windows_that_never_hold(const std::vector<Degradation>& degradations, double soak_seconds) {
  for (const Degradation& degradation : degradations) {
    if (degradation.from_s == 0 && std::isinf(degradation.until_s)) continue;
    if (soak_seconds <= 0)
      throw UsageError(
          "--degrade: a time window (/FROM-UNTIL) applies to --soak only; without one the fault holds "
          "throughout");
    if (degradation.from_s >= soak_seconds)
      throw UsageError(fmt::format("--degrade: a window from {} s starts after the {} s of --soak",
                                   significant_text(degradation.from_s), significant_text(soak_seconds)));
  }
}

// Run on the reporting rank alone: the session gives the provenance of the process, with
// no backend and nothing collective.
int run_simulation(const ValidateOptions& options, JobSession& session) {
  SimulationModel model;
  model.nodes = options.simulate_nodes;
  model.seed = options.plan.seed;
  model.noise = options.noise;
  model.message_bytes = options.measurement.pair_bytes;
  model.iterations = options.measurement.iterations + options.measurement.warmup;
  std::vector<Degradation> degradations;
  if (!options.degrade.empty())
    degradations = parse_degradations(options.degrade, model.nodes, options.degrade_factor, "--degrade");
  refuse_windows_that_never_hold(degradations, options.soak.duration_s);
  SimulatedCluster cluster(model, degradations);
  RunContext context = session.run_context(options.describe());
  if (options.soak.duration_s > 0)
    return run_simulated_soak(cluster, options.soak,
                              fmt::format("# {} {} (commit {}), simulated soak: {}, {} GB/s per node, noise {}, "
                                          "degraded: {}\n",
                                          kProgram, commbench::version(), git_commit(), count_text(model.nodes, "node"),
                                          significant_text(model.nic_gbps), significant_text(options.noise),
                                          options.degrade.empty() ? "none" : options.degrade.c_str()),
                              std::move(context), file_outputs(options.job.files));
  const ValidationOutcome outcome = run_validation_plan(cluster, options.plan);
  fmt::print("# {} {} (commit {}), simulated: {}, {} GB/s per node, noise {}, degraded: {}\n", kProgram,
             commbench::version(), git_commit(), count_text(model.nodes, "node"), significant_text(model.nic_gbps),
             significant_text(options.noise), options.degrade.empty() ? "none" : options.degrade.c_str());
  fmt::print("{}", validation_summary(outcome, options.plan));
  std::fflush(stdout);
  const nlohmann::ordered_json simulation = {{"nodes", model.nodes},
                                             {"nic_gbps", model.nic_gbps},
                                             {"noise", model.noise},
                                             {"degrade", options.degrade},
                                             {"degrade_factor", options.degrade_factor},
                                             {"seed", model.seed},
                                             {"version", commbench::version()},
                                             {"commit", git_commit()}};
  write_simulation_results(options, outcome, std::move(context), simulation);
  return validation_exit_code(outcome);
}

void print_job_header(JobSession& session, const RunContext& context, Backend& backend, const ClusterProbe& probe,
                      const PlanSettings* plan = nullptr) {
  if (!session.reporting()) return;
  fmt::print("# {} {} (commit {}), {} rank{} on {} node{}, backend {}\n", kProgram, commbench::version(), git_commit(),
             backend.ranks(), backend.ranks() == 1 ? "" : "s", probe.nodes(), probe.nodes() == 1 ? "" : "s",
             backend.name());
  fmt::print("{}", slurm_comment_line(context));
  for (const std::string& note : context.notes) fmt::print("# note: {}\n", note);
  if (plan != nullptr) fmt::print("# {}\n", validation_plan_text(*plan, probe.nodes()));
  std::fflush(stdout);
}

int run_in_job(const ValidateOptions& options, JobSession& session) {
  // The backend by name alone: the NCCL-only settings are bench-collectives' flags.
  Backend& backend = session.create_backend(BackendRequest{options.job.backend});
  RunContext context = session.run_context(options.describe());
  context.record_kind = "check";
  if (options.soak.duration_s > 0 && backend.group().node_count() < 2)
    session.step("starting the soak",
                 [] { throw UsageError("--soak: needs a job over at least 2 nodes (it measures pairs of nodes)"); });
  session.open_outputs(file_outputs(options.job.files));
  if (options.soak.duration_s > 0) {
    JobClusterProbe probe(session, backend, options.measurement);
    // A soak's readings get budgets from the fastest pair of their round: a node at 1 % of
    // its rate is then read with a new partner every few seconds, not once for the whole dip.
    probe.expect({});
    print_job_header(session, context, backend, probe);
    return run_soak_in_job(session, probe, context, options.soak);
  }
  session.begin_results(context);
  JobClusterProbe probe(session, backend, options.measurement);
  print_job_header(session, context, backend, probe, &options.plan);
  ValidationOutcome outcome = run_validation_plan(probe, options.plan);
  outcome.wrong = probe.wrong();
  const int exit_code = validation_exit_code(outcome);
  session.step("writing the report", [&] {
    if (!session.reporting()) return;
    fmt::print("{}", validation_summary(outcome, options.plan));
    std::fflush(stdout);
  });
  // Through the session's reporters, however the plan ended: a run stopped by SIGTERM
  // keeps every check made before it (complete: false).
  for (const Record& record : validation_records(outcome)) session.add_record(record);
  RunSummary summary;
  summary.complete = outcome.complete;
  summary.exit_code = exit_code;
  const nlohmann::ordered_json sections = validation_json(outcome, options.plan);
  for (const auto& [key, value] : sections.items()) summary.sections.emplace_back(key, value);
  session.finish_results(summary);
  if (session.reporting() && outcome.interrupted_by != 0)
    print_command_error(kProgram, Interrupted(outcome.interrupted_by).what());
  return exit_code;
}

}  // namespace

int run_bench_validate(int argc, char** argv) {
  const Command<ValidateOptions> command{
      .name = kProgram,
      .description =
          "bench-validate: the check before a training job. Node-local checks, collectives inside every node, node "
          "pairs in a fixed number of rounds (suspects re-tested with fresh partners), a collective over every node "
          "(bisected when it falls short); names the bad nodes and links and prints --exclude=HOSTLIST.",
      .schema = kSchema,
      .profile_category = ProfileCategory::validate,
      .add_options = add_validate_options,
      .validate = validate_validate_options,
      .run =
          [](const ValidateOptions& given, JobSession& session) {
            const ValidateOptions options = with_site_file(given, session);
            // A simulation measures nothing: the reporting rank runs the plan alone, in the
            // same report format.
            if (options.simulate_nodes > 0) return session.reporting() ? run_simulation(options, session) : 0;
            return run_in_job(options, session);
          },
      // A simulation writes its CSV whole, renamed into place: not into a device or a FIFO.
      .replaced_files =
          [](const ValidateOptions& options) {
            return options.simulate_nodes > 0 ? NamedPaths{{options.job.files.csv_path, "--csv"}} : NamedPaths{};
          },
      .read_files =
          [](const ValidateOptions& options) {
            return NamedPaths{{options.expect_path, "--expect"}};
          },
  };
  return run_command(command, argc, argv);
}

}  // namespace commbench
