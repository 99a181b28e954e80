#include "commbench/cli/bench_collectives_app.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "commbench/backend/backend_factory.hpp"
#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/mpi/mpi_bootstrap.hpp"
#include "commbench/backend/mpi/mpi_environment.hpp"
#include "commbench/cli/collectives_options.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/report/console_reporter.hpp"
#include "commbench/report/csv_reporter.hpp"
#include "commbench/report/json_reporter.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance.hpp"
#include "commbench/runner/runner.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-collectives";

void print_error(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", kProgram, message.c_str());
  std::fflush(stderr);
}

// Drops the element types / reductions the backend cannot run when the user asked for
// "all" (with a note), and refuses them when the user named them.
void keep_supported(CollectivesOptions& o, const Backend& backend, std::vector<std::string>& notes) {
  std::vector<DataType> dtypes;
  for (DataType t : o.dtypes) {
    const auto why = backend.unsupported_reason(Collective::broadcast, t, ReduceOp::none);
    if (!why) {
      dtypes.push_back(t);
    } else if (o.dtypes_all) {
      notes.push_back("skipped " + std::string(name_of(t)) + ": " + *why);
    } else {
      throw UsageError(*why);
    }
  }
  if (dtypes.empty()) throw UsageError("-d/--dtype: the " + backend.name() + " backend supports none of these types");
  o.dtypes = dtypes;

  bool any_reducing = false;
  for (Collective op : o.ops) any_reducing = any_reducing || reduces(op);
  std::vector<ReduceOp> redops;
  for (ReduceOp r : o.redops) {
    const auto why = backend.unsupported_reason(Collective::allreduce, o.dtypes.front(), r);
    if (!why) {
      redops.push_back(r);
    } else if (o.redops_all || !any_reducing) {
      if (any_reducing) notes.push_back("skipped " + std::string(name_of(r)) + ": " + *why);
    } else {
      throw UsageError(*why);
    }
  }
  if (redops.empty() && any_reducing)
    throw UsageError("-o/--redop: the " + backend.name() + " backend supports none of these reductions");
  o.redops = redops;
}

struct Reporters {
  std::vector<std::unique_ptr<Reporter>> all;
  std::vector<FileHandle> files;

  void begin(const RunContext& c) {
    for (auto& r : all) r->begin(c);
  }
  void add_row(const ResultRow& row) {
    for (auto& r : all) r->add_row(row);
  }
  void finish(const RunSummary& s) {
    for (auto& r : all) r->finish(s);
  }
};

Reporters open_reporters(const CollectivesOptions& o) {
  Reporters reporters;
  switch (o.stdout_format) {
    case OutputFormat::table: reporters.all.push_back(std::make_unique<ConsoleReporter>(stdout)); break;
    case OutputFormat::csv: reporters.all.push_back(std::make_unique<CsvReporter>(stdout)); break;
    case OutputFormat::json: reporters.all.push_back(std::make_unique<JsonReporter>("", stdout)); break;
  }
  if (!o.csv_path.empty()) {
    reporters.files.push_back(open_output_file(o.csv_path, "--csv", o.force));
    reporters.all.push_back(std::make_unique<CsvReporter>(reporters.files.back().get()));
  }
  if (!o.json_path.empty()) {
    check_output_path(o.json_path, "--json", o.force);
    create_parent_directories(o.json_path, "--json");
    reporters.all.push_back(std::make_unique<JsonReporter>(o.json_path, nullptr));
  }
  return reporters;
}

int run_with_mpi(CollectivesOptions o, const std::string& command_line) {
  mpi::MpiBootstrap world(MPI_COMM_WORLD);
  std::unique_ptr<Backend> backend;
  std::vector<OpCase> plan;
  RunContext context;

  collective_try(world, [&] {
    backend = make_backend(o.backend);
    validate_for_ranks(o, backend->ranks());
    keep_supported(o, *backend, context.notes);
    PlanRequest request{o.ops, o.dtypes, o.redops, o.placements, sweep_sizes(o.sweep), o.root, backend->ranks()};
    plan = build_plan(request);
    backend->validate_plan(plan);
  });

  Bootstrap& group = backend->group();
  Watchdog watchdog(o.timeout_seconds, kProgram, "rank " + std::to_string(group.rank()) + " (host " +
                                                     group.hostname() + ")");
  RunnerSettings settings;
  settings.stopping = o.stopping;
  settings.warmup_iterations = o.warmup_iterations;
  settings.check = o.check;
  settings.target_batch_seconds = o.batch_seconds;
  settings.corrupt_rank = o.debug_corrupt_rank;
  Runner runner(*backend, settings, &watchdog);
  runner.prepare(plan);

  const bool reporting = world.rank() == 0;
  Reporters reporters;
  collective_try(world, [&] {
    if (reporting) reporters = open_reporters(o);
  });

  context.program = kProgram;
  context.version = commbench::version();
  context.commit = git_commit();
  context.backend = backend->name();
  context.backend_version = backend->library_version();
  context.mpi_version = mpi::MpiEnvironment::library_version();
  context.ranks = backend->ranks();
  context.nodes = group.node_count();
  context.rank_hosts = group.hostnames();
  context.command_line = command_line;
  context.started_at = utc_timestamp();
  context.settings = o.describe();
  context.environment = relevant_environment();
  context.notes.push_back("theoretical_busbw and efficiency are empty: no bandwidth model for this layout yet");
  if (reporting) reporters.begin(context);

  RunSummary summary;
  double busbw_sum = 0;
  for (const OpCase& c : plan) {
    const ResultRow row = runner.run(c);
    summary.rows += 1;
    summary.wrong_elements += row.wrong.value_or(0);
    busbw_sum += row.busbw_gbps;
    if (reporting) reporters.add_row(row);
  }
  summary.average_busbw_gbps = summary.rows ? busbw_sum / static_cast<double>(summary.rows) : 0;
  summary.check_failures = runner.check_failures();
  summary.exit_code = summary.check_failures.empty() ? 0 : static_cast<int>(ExitCode::check_failed);
  collective_try(world, [&] {
    if (reporting) reporters.finish(summary);
  });
  if (reporting)
    for (const std::string& failure : summary.check_failures) print_error("check failed: " + failure);
  return summary.exit_code;
}

}  // namespace

int run_bench_collectives(int argc, char** argv) {
  const std::optional<int> launcher = launcher_rank([](const char* name) { return std::getenv(name); });
  const bool prints_before_mpi = !launcher || *launcher == 0;
  const std::string command_line = quoted_command_line(argc, argv);

  ParsedCommandLine parsed;
  try {
    parsed = parse_collectives_command_line(argc, argv);
    if (parsed.options) {
      if (!parsed.options->csv_path.empty()) check_output_path(parsed.options->csv_path, "--csv", parsed.options->force);
      if (!parsed.options->json_path.empty())
        check_output_path(parsed.options->json_path, "--json", parsed.options->force);
    }
  } catch (const UsageError& e) {
    if (prints_before_mpi) print_error(e.what());
    return static_cast<int>(ExitCode::usage);
  }
  if (!parsed.options) {
    if (prints_before_mpi) std::printf("%s\n", parsed.text_to_print.c_str());
    return 0;
  }

  std::optional<mpi::MpiEnvironment> environment;
  try {
    environment.emplace(&argc, &argv);
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(ExitCode::backend);
  }

  try {
    return run_with_mpi(*parsed.options, command_line);
  } catch (const ReportedByAnotherRank& e) {
    return static_cast<int>(e.exit_code());
  } catch (const Error& e) {
    print_error(e.what());
    // Other ranks may be waiting inside a collective for this one: end them all.
    if (e.exit_code() == ExitCode::backend) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::backend));
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::backend));
    return static_cast<int>(ExitCode::backend);
  }
}

}  // namespace commbench
