#include "commbench/cli/bench_collectives_app.hpp"
#include "commbench/runner/batch_length.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "commbench/backend/backend_factory.hpp"
#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/job_runtime.hpp"
#include "commbench/analysis/algorithm_comparison.hpp"
#include "commbench/analysis/collectives_bandwidth.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/cli/collectives_options.hpp"
#include "commbench/analysis/collectives_soak.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/analysis/nic_watch.hpp"
#include "commbench/analysis/profile_range_plan.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/report/json_reporter.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/runner/runner.hpp"
#include "commbench/topology/gpu_nics.hpp"
#include "commbench/validate/threshold_check.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-collectives";

void print_error(const std::string& message) { print_command_error(kProgram, message); }

// A backend's "can't" on one rank (an older GPU on one node) is a "can't" for all: the
// answer is agreed over the group so every rank builds the same plan.
std::optional<std::string> agreed_reason(Bootstrap& world, const std::optional<std::string>& local) {
  const int first = world.first_rank_where(local.has_value());
  if (first < 0) return std::nullopt;
  const std::string reason = broadcast_as(world, local.value_or(""), first);
  return first == 0 ? reason : fmt::format("{} (on rank {})", reason, first);
}

// Drops the element types / reductions the backend cannot run when the user asked for
// "all" (with a note), and refuses them when the user named them.
void keep_supported(CollectivesOptions& options, const Backend& backend, Bootstrap& world,
                    std::vector<std::string>& notes) {
  std::vector<DataType> dtypes;
  for (DataType t : options.dtypes) {
    const auto why = agreed_reason(world, backend.unsupported_reason(Collective::allreduce, t, ReduceOp::sum));
    if (!why) {
      dtypes.push_back(t);
    } else if (options.dtypes_all) {
      notes.push_back("skipped " + std::string(name_of(t)) + ": " + *why);
    } else {
      throw UsageError(*why);
    }
  }
  if (dtypes.empty()) throw UsageError("-d/--dtype: the " + backend.name() + " backend supports none of these types");
  options.dtypes = dtypes;

  bool any_reducing = false;
  for (Collective op : options.ops) any_reducing = any_reducing || reduces(op);
  std::vector<ReduceOp> redops;
  for (ReduceOp r : options.redops) {
    const auto why = agreed_reason(world, backend.unsupported_reason(Collective::allreduce, options.dtypes.front(), r));
    if (!why) {
      redops.push_back(r);
    } else if (options.redops_all || !any_reducing) {
      if (any_reducing) notes.push_back("skipped " + std::string(name_of(r)) + ": " + *why);
    } else {
      throw UsageError(*why);
    }
  }
  if (redops.empty() && any_reducing)
    throw UsageError("-o/--redop: the " + backend.name() + " backend supports none of these reductions");
  options.redops = redops;
}

// In-place forms the backend lacks are skipped with a note (asked for with --placement
// in/both over several collectives, failing the whole run would help nobody), but a
// plan that would be left empty is an error.
std::vector<OpCase> keep_supported_placements(const std::vector<OpCase>& plan, const Backend& backend,
                                              std::vector<std::string>& notes) {
  std::vector<OpCase> kept;
  std::vector<Collective> noted;
  for (const OpCase& c : plan) {
    const auto why = c.placement == Placement::in_place ? backend.unsupported_in_place(c.op) : std::nullopt;
    if (!why) {
      kept.push_back(c);
    } else if (std::find(noted.begin(), noted.end(), c.op) == noted.end()) {
      noted.push_back(c.op);
      notes.push_back("skipped " + *why);
    }
  }
  if (kept.empty() && !plan.empty()) throw UsageError("--placement: " + notes.front().substr(8));
  return kept;
}

// The texts of --thresholds and --baseline. Rank 0 reads the files and every rank gets
// the same text, so a file only rank 0's node can see (a home directory on the login
// node, a node-local /tmp) is enough. They are read inside the job, where the watchdog
// covers a file that never delivers (a FIFO).
struct ThresholdFiles {
  std::string rules_origin, rules_text;
  std::string baseline_origin, baseline_text;
};

ThresholdFiles read_threshold_files(const CollectivesOptions& options, Bootstrap& world, Watchdog& watchdog) {
  ThresholdFiles files{"--thresholds " + options.thresholds_path, "", "--baseline " + options.baseline_path, ""};
  auto guard = watchdog.guard("reading --thresholds/--baseline");
  collective_try(world, [&] {
    if (world.rank() != 0) return;
    if (!options.thresholds_path.empty())
      files.rules_text = read_input_file(options.thresholds_path, files.rules_origin);
    if (!options.baseline_path.empty())
      files.baseline_text = read_input_file(options.baseline_path, files.baseline_origin);
  });
  files.rules_text = broadcast_as(world, files.rules_text, 0);
  files.baseline_text = broadcast_as(world, files.baseline_text, 0);
  return files;
}

// Every rank parses the same text, so every rank meets the same error (inside
// collective_try, which lets rank 0 print it once).
ThresholdCheck parse_threshold_check(const CollectivesOptions& options, const ThresholdFiles& files) {
  std::vector<ThresholdRule> rules = options.threshold_rules;
  if (!options.thresholds_path.empty())
    for (ThresholdRule& rule : parse_threshold_rules(files.rules_text, files.rules_origin))
      rules.push_back(std::move(rule));
  std::optional<Baseline> baseline;
  if (!options.baseline_path.empty()) baseline = parse_baseline(files.baseline_text, files.baseline_origin);
  return ThresholdCheck(std::move(rules), std::move(baseline));
}

MissingBound missing_bound_in(const CollectiveBandwidths& bandwidths) {
  return [&bandwidths](Collective op, Reference reference) -> std::optional<std::string> {
    const auto it = bandwidths.find(op);
    if (it == bandwidths.end()) return "not modelled";
    const std::optional<double>& bound =
        reference == Reference::achievable ? it->second.achievable_gbps : it->second.spec_gbps;
    if (bound) return std::nullopt;
    return it->second.basis;
  };
}

// Failures go to stderr as well as to the reports; past a screenful, stderr says how
// many more there are instead of burying the first ones.
void print_threshold_failures(const std::vector<std::string>& failures) {
  constexpr std::size_t kShown = 10;
  for (std::size_t i = 0; i < failures.size() && i < kShown; ++i) print_error("threshold failed: " + failures[i]);
  if (failures.size() > kShown)
    print_error(fmt::format(
        "... and {} more threshold failures (all are listed at the end of the table and in the JSON summary)",
        failures.size() - kShown));
}

// The cases to run: the flags' cases the backend can run, agreed over every rank (collective).
std::vector<OpCase> plan_sweep(CollectivesOptions& options, Backend& backend, JobSession& session,
                               std::vector<std::string>& notes) {
  std::vector<OpCase> plan;
  session.step("planning the sweep", [&] {
    validate_for_ranks(options, backend.ranks());
    keep_supported(options, backend, session.world(), notes);
    PlanRequest request{options.ops,
                        options.dtypes,
                        options.redops,
                        options.placements,
                        sweep_sizes(options.sweep),
                        options.root,
                        backend.ranks(),
                        options.alltoallv_distribution};
    plan = keep_supported_placements(build_plan(request), backend, notes);
    backend.validate_plan(plan);
    for (std::string& note : profile_range_notes(options.profile_range, plan, backend))
      notes.push_back(std::move(note));
  });
  return plan;
}

RunnerSettings runner_settings(const CollectivesOptions& options) {
  RunnerSettings settings;
  settings.stopping = options.stopping;
  settings.warmup_iterations = options.warmup_iterations;
  settings.check = options.check;
  settings.target_batch_seconds = options.batch_seconds.value_or(default_batch_seconds("mpi"));
  settings.corrupt_rank = options.debug_corrupt_rank;
  settings.profile_range = options.profile_range;
  return settings;
}

bool counts_nics(const CollectivesOptions& options, Backend& backend) {
  return options.nic_counters == NicCounting::on ||
         (options.nic_counters == NicCounting::automatic && backend.group().node_count() > 1);
}

// Collective: a rank that never arrives must end in the watchdog's report.
std::vector<NodeNic> finish_nic_case(NicWatch& nic_watch, Watchdog& watchdog, const OpCase& c) {
  auto guard = watchdog.guard("gathering the NIC counters of a case");
  return nic_watch.finish_case(c);
}

// Every case once: the sweep, or one interval of a soak.
struct SweepPass {
  JobSession& session;
  Runner& runner;
  NicWatch& nic_watch;
  const CollectiveBandwidths& bandwidths;
  ThresholdCheck& thresholds;
  CollectivesSoak& soak;
  AlgorithmComparison algorithms{};

  void run(const std::vector<OpCase>& plan, int interval, double start_s, const std::function<double()>& clock) {
    session.begin_phase(soak.enabled() ? fmt::format("measurement, pass {}", interval + 1) : "measurement",
                        plan.size(), "case");
    std::uint64_t done = 0;
    for (const OpCase& c : plan) {
      session.advance_phase(done++);
      nic_watch.start_case();
      ResultRow row = runner.run(c);
      const std::vector<NodeNic> nics = finish_nic_case(nic_watch, session.watchdog(), c);
      apply_bandwidth_model(bandwidths, row);
      algorithms.add(row);
      if (soak.enabled()) soak.add(c, interval, start_s, clock(), row, nics);
      RunSummary& summary = session.summary();
      for (std::string& failure : thresholds.evaluate(row)) summary.threshold_failures.push_back(std::move(failure));
      summary.threshold_rows += row.threshold_passed.has_value() ? 1 : 0;
      session.add_row(row);
      for (const NodeNic& nic : nics) session.add_record(nic_record(c, nic));
    }
  }
};

// The sweep once, or for a soak pass after pass until its duration, at most one pass an
// interval. The soak's clock is agreed over the ranks, so all of them stop together.
void run_passes(SweepPass& pass, const std::vector<OpCase>& plan, CollectivesSoak& soak, JobSession& session) {
  if (!soak.enabled()) return pass.run(plan, 0, 0, {});
  const auto started = std::chrono::steady_clock::now();
  soak.begin(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  const auto clock = [&] {
    const double own = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    auto guard = session.watchdog().guard("agreeing on the soak's clock");
    return session.world().max(own);
  };
  for (int interval = 0;; ++interval) {
    const double start = clock();
    pass.run(plan, interval, start, clock);
    const double next = start + soak.interval_s();
    const double now = clock();
    if (std::max(now, next) >= soak.duration_s()) return;
    if (next > now) sleep_unless_interrupted(next - now);
  }
}

SoakRule soak_rule() { return SoakRule{}; }

// What the sweep learned besides its rows, after its last case or a signal; the exit code
// of a sweep that went to its end.
int summarise_sweep(RunSummary& summary, Runner& runner, NicWatch& nic_watch, CollectivesSoak& soak,
                    AlgorithmComparison& algorithms) {
  summary.check_failures = runner.check_failures();
  for (std::string& note : algorithms.notes()) summary.notes.push_back(std::move(note));
  for (std::string& note : nic_watch.flag_notes()) summary.notes.push_back(std::move(note));
  const std::vector<CaseDip> dips = soak.dips();
  const bool dipped = std::any_of(dips.begin(), dips.end(), [](const CaseDip& dip) { return dip.fails; });
  summary.console_text = algorithms.console_text() + nic_watch.rails_table() + soak.console_text(dips);
  if (soak.enabled()) summary.sections.emplace_back("soak", soak.json_section(dips));
  const bool failed = !summary.check_failures.empty() || !summary.threshold_failures.empty() || dipped;
  return failed ? static_cast<int>(ExitCode::check_failed) : 0;
}

// The reporting rank's closing lines on stderr: each failed check and rule, and a dip.
void report_sweep_failures(const RunSummary& summary, CollectivesSoak& soak) {
  for (const std::string& failure : summary.check_failures) print_error("check failed: " + failure);
  print_threshold_failures(summary.threshold_failures);
  const std::vector<CaseDip> dips = soak.dips();
  if (std::any_of(dips.begin(), dips.end(), [](const CaseDip& dip) { return dip.fails; }))
    print_error(fmt::format("soak: a case's busbw dipped below {} % of its steady level (the lines above)",
                            significant_text(100 * soak.rule().fraction, 3)));
}

int run_sweep(const CollectivesOptions& given, JobSession& session) {
  CollectivesOptions options = given;  // the backend may narrow "-d all" and "-o all"
  Bootstrap& world = session.world();
  Watchdog& watchdog = session.watchdog();
  Backend& backend =
      session.create_backend(BackendRequest{options.job.backend, options.gpus_per_process, options.register_buffers,
                                            options.cuda_graph_iterations, options.blocking});
  if (!options.batch_seconds) options.batch_seconds = default_batch_seconds(backend.name());
  // One rank's busbw is 0 by nccl-tests' factor: every interval would read as a dip.
  if (options.soak_seconds > 0 && backend.ranks() < 2)
    throw UsageError(
        "--soak: watches the busbw between ranks, and one rank has none (its collective is a copy); run it under "
        "mpirun or srun on 2 or more ranks");
  std::vector<std::string> notes;
  const std::vector<OpCase> plan = plan_sweep(options, backend, session, notes);
  if (std::optional<std::string> why = backend.library_choices_unavailable()) notes.push_back(std::move(*why));
  std::optional<ThresholdCheck> thresholds;
  const ThresholdFiles threshold_files = read_threshold_files(options, world, watchdog);
  session.step("checking the threshold rules", [&] {
    thresholds.emplace(parse_threshold_check(options, threshold_files));
    for (std::string& note :
         thresholds->check_plan(plan, backend.ranks(), backend.name(), backend.group().node_count()))
      notes.push_back(std::move(note));
  });

  CollectiveBandwidths bandwidths;
  std::optional<NodeTopology> node;
  {
    auto guard = watchdog.guard("probing the topology for the bandwidth model");
    bandwidths = model_collective_bandwidths(backend, options.ops, &node);
  }
  for (std::string& note : bandwidth_notes(bandwidths)) notes.push_back(std::move(note));
  // A rule the model cannot evaluate is refused now, before any result file exists.
  session.step("checking the threshold rules against the bandwidth model",
               [&] { thresholds->check_model(plan, missing_bound_in(bandwidths)); });

  session.open_outputs(options.outputs());
  RunContext context = session.run_context(options.describe());
  for (std::string& note : notes) context.notes.push_back(std::move(note));
  CollectivesSoak soak(options.soak_seconds, options.soak_interval_seconds, soak_rule());
  if (soak.enabled()) context.extra_columns = CollectivesSoak::extra_columns();
  session.begin_results(context);
  // The buffers are allocated once the files are open: a signal while they are (a large
  // -e takes a while) still leaves files that say so.
  session.begin_phase("allocation");
  Runner runner(backend, runner_settings(options), &watchdog);
  runner.prepare(plan);

  NicWatch nic_watch(backend.group(), counts_nics(options, backend), options.nic_fraction);
  if (node) nic_watch.name_nearest_gpus(gpus_nearest_each_nic(*node));
  SweepPass pass{session, runner, nic_watch, bandwidths, *thresholds, soak};
  session.end_run_with({.summarise = [&](RunSummary& summary) {
                          return summarise_sweep(summary, runner, nic_watch, soak, pass.algorithms);
                        },
                        .report = [&](const RunSummary& summary) { report_sweep_failures(summary, soak); }});
  return session.finish_after([&] { run_passes(pass, plan, soak, session); });
}

}  // namespace

int run_bench_collectives(int argc, char** argv) {
  const Command<CollectivesOptions> command{
      .name = kProgram,
      .description = kCollectivesDescription,
      .schema = kJsonSchema,
      .profile_category = ProfileCategory::collectives,
      .add_options = add_collectives_options,
      .validate = validate_collectives_options,
      .run = run_sweep,
      .version_lists_backends = true,
      .read_files =
          [](const CollectivesOptions& options) {
            return NamedPaths{{options.thresholds_path, "--thresholds"}, {options.baseline_path, "--baseline"}};
          },
  };
  return run_command(command, argc, argv);
}

}  // namespace commbench
