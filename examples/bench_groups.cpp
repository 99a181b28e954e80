// bench-groups: the example command of docs/architecture.md ("How to add a command"). It
// times an allreduce inside every group of K consecutive ranks at once, for each group
// size K given: what a tensor-parallel group's collective does while the other groups run
// theirs. It is built only on the seams (run_command, JobSession, Backend::split, Runner
// over the one measurement loop, extra row fields); it contains no job set-up of its own.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commbench/cli/flag_values.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/size.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/runner/runner.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-groups";

struct GroupsOptions {
  std::vector<int> group_sizes{2};
  std::uint64_t bytes = 1 << 20;
  std::uint64_t iterations = 20;
  double timeout_seconds = 60;
  OutputRequest outputs;

  std::vector<std::pair<std::string, std::string>> describe() const {
    std::string sizes;
    for (int size : group_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
    return {{"group_sizes", sizes}, {"bytes", std::to_string(bytes)}, {"iters", std::to_string(iterations)}};
  }
};

GroupsOptions parse_options(int argc, char** argv, std::optional<std::string>& text_instead) {
  CLI::App app{"bench-groups: allreduce inside every group of K consecutive ranks at once (an example command)."};
  app.name(kProgram);
  GroupsOptions options;
  std::string size_text = "1M", timeout_text = "60";
  app.add_option("-k,--group-size", options.group_sizes, "Ranks per group; several values measure each")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("-b,--bytes", size_text, "Allreduce size per group (binary units: 1M = 1048576)");
  app.add_option("-n,--iters", options.iterations, "Timed iterations per group size")->check(CLI::PositiveNumber);
  app.add_option("-T,--timeout", timeout_text, "Seconds a step may take before exit 4; 0 disables");
  app.add_option("--csv", options.outputs.csv_path, "Stream the rows to this CSV file");
  app.add_option("--json", options.outputs.json_path, "Write provenance and rows to this JSON file");
  app.add_flag("--force", options.outputs.force, "Overwrite existing result files");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    text_instead = app.help();
    return options;
  } catch (const CLI::ParseError& e) {
    const std::string message = e.what();
    throw UsageError(message.substr(0, message.find('\n')) + " (see --help)");
  }
  options.bytes = parse_size(size_text, "-b/--bytes");
  options.timeout_seconds = parse_timeout_seconds(timeout_text);
  if (is_reporting_process()) check_output_paths(options.outputs);
  return options;
}

// One row: an allreduce inside every group of `size` consecutive ranks, all groups at
// once. The reporting rank's group (group 0) speaks for them.
ResultRow measure_groups_of(int size, const GroupsOptions& options, Backend& world_backend, JobSession& session) {
  const int rank = world_backend.group().rank();
  std::unique_ptr<Backend> group;
  session.step("splitting into groups of " + std::to_string(size),
               [&] { group = world_backend.split(rank / size, rank); });
  ResultRow row;
  {
    const std::vector<OpCase> plan = build_plan(PlanRequest{{Collective::allreduce},
                                                            {DataType::float32},
                                                            {ReduceOp::sum},
                                                            {Placement::out_of_place},
                                                            {options.bytes},
                                                            0,
                                                            group->ranks(),
                                                            {}});
    RunnerSettings settings;
    settings.stopping.fixed_iterations = options.iterations;
    Runner runner(*group, settings, &session.watchdog());
    runner.prepare(plan);
    row = runner.run(plan.front());
  }
  {
    // Freeing a sub-communicator may wait for its peers.
    auto guard = session.watchdog().guard("releasing the groups of " + std::to_string(size));
    group.reset();
  }
  row.extra = {ExtraField{"group_size", std::int64_t{size}},
               ExtraField{"groups", std::int64_t{world_backend.ranks() / size}}};
  return row;
}

int run_groups(const GroupsOptions& options, JobSession& session) {
  Backend& world_backend = session.create_backend(BackendRequest{});
  session.step("checking the group sizes", [&] {
    for (int size : options.group_sizes)
      if (world_backend.ranks() % size != 0)
        throw UsageError("-k/--group-size: " + std::to_string(size) + " does not divide the " +
                         std::to_string(world_backend.ranks()) + " ranks");
  });
  session.open_outputs(options.outputs);
  RunContext context = session.run_context(options.describe());
  context.extra_columns = {"group_size", "groups"};
  session.begin_results(context);

  RunSummary summary;
  std::optional<Interrupted> interruption;
  try {
    for (int size : options.group_sizes) {
      session.add_row(measure_groups_of(size, options, world_backend, session));
      summary.rows += 1;
    }
  } catch (const Interrupted& e) {
    // Every rank agreed on it inside the measurement loop: the rows so far are kept.
    interruption = e;
    summary.complete = false;
  }
  summary.exit_code = interruption ? static_cast<int>(interruption->exit_code()) : 0;
  session.finish_results(summary);
  return summary.exit_code;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) {
  using namespace commbench;
  GroupsOptions options;
  const auto prepare = [&]() -> std::optional<std::string> {
    std::optional<std::string> text_instead;
    options = parse_options(argc, argv, text_instead);
    return text_instead;
  };
  return run_command(
      kProgram, argc, argv, true, prepare, [&] { return options.timeout_seconds; },
      [&](JobStart& start) {
        JobSession session(start, "commbench.groups/1");
        return run_groups(options, session);
      });
}
