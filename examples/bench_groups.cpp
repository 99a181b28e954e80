// bench-groups: the example command of docs/architecture.md ("How to add a command"). It
// times an allreduce inside every group of K consecutive ranks at once, for each group
// size K given: what a tensor-parallel group's collective does while the other groups run
// theirs. A command is its options, a validate step and a run that emits rows; the shell
// opens and finishes the result files, and turns a signal into complete: false files.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/parsed_option.hpp"
#include "commbench/core/size.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/runner/runner.hpp"

namespace commbench {
namespace {

struct GroupsOptions {
  JobOptions job{.backend = "auto", .timeout_seconds = 60, .files = {}};
  MeasurementOptions measurement{.iterations = 20, .warmup = 1};
  std::vector<int> group_sizes{2};
  std::uint64_t bytes = 1 << 20;
};

void add_options(CLI::App& app, GroupsOptions& options) {
  app.add_option("-k,--group-size", options.group_sizes, "Ranks per group; several values measure each")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  add_parsed_option(app, "-b,--bytes", options.bytes, parse_size, "Allreduce size per group (binary units: 1M = 1048576)",
                    "SIZE");
  add_measurement_options(app, options.measurement, "Timed iterations per group size", "Iterations before timing");
  add_job_options(app, options.job, "a step", "Stream the rows to this CSV file",
                  "Write provenance and rows to this JSON file");
}

// One row: an allreduce inside every group of `size` consecutive ranks, all groups at
// once. The reporting rank's group (group 0) speaks for them.
ResultRow measure_groups_of(int size, const GroupsOptions& options, Backend& world, JobSession& session) {
  std::unique_ptr<Backend> group;
  const int rank = world.group().rank();
  session.step(fmt::format("splitting into groups of {}", size), [&] { group = world.split(rank / size, rank); });
  RunnerSettings settings;
  settings.stopping.fixed_iterations = options.measurement.iterations;
  settings.warmup_iterations = options.measurement.warmup;
  const std::vector<OpCase> plan = build_plan(PlanRequest{{Collective::allreduce}, {DataType::float32},
                                                          {ReduceOp::sum}, {Placement::out_of_place},
                                                          {options.bytes}, 0, group->ranks(), {}});
  ResultRow row;
  // A signal is agreed within the group first; the job agrees on it once the group is gone.
  int signal = signal_that_stopped([&] {
    Runner runner(*group, settings, &session.watchdog());
    runner.prepare(plan);
    row = runner.run(plan.front());
  });
  session.step(fmt::format("releasing the groups of {}", size), [&] {
    group.reset();  // freeing a sub-communicator may wait for its peers
    signal = world.group().max(signal);
  });
  if (signal != 0) throw Interrupted(signal);
  row.extra = {ExtraField{"group_size", std::int64_t{size}}, ExtraField{"groups", std::int64_t{world.ranks() / size}}};
  return row;
}

int run_groups(const GroupsOptions& options, JobSession& session) {
  Backend& world = session.create_backend(BackendRequest{options.job.backend});
  session.step("checking the group sizes", [&] {
    for (int size : options.group_sizes)
      if (world.ranks() % size != 0)
        throw UsageError(fmt::format("-k/--group-size: {} does not divide the {} ranks", size, world.ranks()));
  });
  RunContext context = session.run_context({{"group_sizes", fmt::format("{}", fmt::join(options.group_sizes, ","))},
                                            {"bytes", std::to_string(options.bytes)},
                                            {"iters", std::to_string(options.measurement.iterations)}});
  context.extra_columns = {"group_size", "groups"};
  session.begin_results(file_outputs(options.job.files, OutputFormat::table), context);
  for (int size : options.group_sizes) session.add_row(measure_groups_of(size, options, world, session));
  return 0;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) {
  using namespace commbench;
  const Command<GroupsOptions> command{
      .name = "bench-groups",
      .description = "bench-groups: allreduce inside every group of K consecutive ranks at once (an example command).",
      .schema = "commbench.groups/1",
      .profile_category = ProfileCategory::collectives,
      .add_options = add_options,
      .run = run_groups,
  };
  return run_command(command, argc, argv);
}
