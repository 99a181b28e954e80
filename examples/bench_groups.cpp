// bench-groups: the example command of docs/architecture.md ("How to add a command"). It
// times an allreduce inside every group of K consecutive ranks at once, for each group
// size K given: what a tensor-parallel group's collective does while the other groups run
// theirs. It is built only on the seams: the command shell (its options, the shared
// groups, validate, run), the job session, Backend::split, the runner over the one
// measurement loop, and records with the command's own fields.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commbench/cli/command_shell.hpp"
#include "commbench/core/size.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/runner/runner.hpp"

namespace commbench {
namespace {

struct GroupsOptions {
  JobOptions job{"auto", 60, {}};
  MeasurementOptions measurement{20, 1};
  std::vector<int> group_sizes{2};
  std::uint64_t bytes = 1 << 20;
};

void add_options(CLI::App& app, GroupsOptions& options) {
  app.add_option("-k,--group-size", options.group_sizes, "Ranks per group; several values measure each")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option_function<std::string>(
         "-b,--bytes", [&options](const std::string& text) { options.bytes = parse_size(text, "-b/--bytes"); },
         "Allreduce size per group (binary units: 1M = 1048576)")
      ->type_name("SIZE");
  add_measurement_options(app, options.measurement, "Timed iterations per group size", "Iterations before timing");
  add_job_options(app, options.job, "a step", "Stream the rows to this CSV file",
                  "Write provenance and rows to this JSON file");
}

// One row: an allreduce inside every group of `size` consecutive ranks, all groups at
// once. The reporting rank's group (group 0) speaks for them.
ResultRow measure_groups_of(int size, const GroupsOptions& options, Backend& world, JobSession& session) {
  std::unique_ptr<Backend> group;
  const int rank = world.group().rank();
  session.step("splitting into groups of " + std::to_string(size), [&] { group = world.split(rank / size, rank); });
  RunnerSettings settings;
  settings.stopping.fixed_iterations = options.measurement.iterations;
  settings.warmup_iterations = options.measurement.warmup;
  const std::vector<OpCase> plan = build_plan(PlanRequest{{Collective::allreduce}, {DataType::float32},
                                                          {ReduceOp::sum}, {Placement::out_of_place},
                                                          {options.bytes}, 0, group->ranks(), {}});
  ResultRow row;
  int signal = 0;
  try {
    Runner runner(*group, settings, &session.watchdog());
    runner.prepare(plan);
    row = runner.run(plan.front());
  } catch (const Interrupted& stop) {  // agreed within the group only: the job learns of it below
    signal = stop.signal_number();
  }
  session.step("releasing the groups of " + std::to_string(size), [&] {
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
        throw UsageError("-k/--group-size: " + std::to_string(size) + " does not divide the " +
                         std::to_string(world.ranks()) + " ranks");
  });
  session.open_outputs(file_outputs(options.job.files, OutputFormat::table));
  std::string sizes;
  for (int size : options.group_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
  RunContext context = session.run_context({{"group_sizes", sizes},
                                            {"bytes", std::to_string(options.bytes)},
                                            {"iters", std::to_string(options.measurement.iterations)}});
  context.extra_columns = {"group_size", "groups"};
  session.begin_results(context);
  RunSummary summary;
  double busbw_sum = 0;
  try {
    for (int size : options.group_sizes) {
      const ResultRow row = measure_groups_of(size, options, world, session);
      busbw_sum += row.busbw_gbps;
      session.add_row(row);
      summary.rows += 1;
    }
  } catch (const Interrupted& e) {  // every rank agreed on it: the rows so far are kept
    summary.complete = false;
    summary.exit_code = static_cast<int>(e.exit_code());
    if (session.reporting()) print_command_error("bench-groups", e.what());
  }
  // Over the rows measured, as nccl-tests' "Avg bus bandwidth" is.
  if (summary.rows > 0) summary.average_busbw_gbps = busbw_sum / static_cast<double>(summary.rows);
  session.finish_results(summary);
  return summary.exit_code;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) {
  using namespace commbench;
  const Command<GroupsOptions> command{
      "bench-groups", "bench-groups: allreduce inside every group of K consecutive ranks at once (an example command).",
      "commbench.groups/1", ProfileCategory::collectives, add_options, {}, run_groups};
  return run_command(command, argc, argv);
}
