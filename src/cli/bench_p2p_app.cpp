#include "commbench/cli/bench_p2p_app.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line_parser.hpp"
#include "commbench/backend/backend_factory.hpp"
#include "commbench/analysis/collectives_bandwidth.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/flag_values.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/analysis/nic_watch.hpp"
#include "commbench/analysis/pair_cell_model.hpp"
#include "commbench/config.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/size.hpp"
#include "commbench/p2p/pair_matrix.hpp"
#include "commbench/p2p/pair_matrix_run.hpp"
#include "commbench/p2p/pair_schedule.hpp"
#include "commbench/p2p/rail_schedule.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/gpu_nics.hpp"
#include "commbench/analysis/p2p_local_run.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-p2p";
constexpr const char* kSchema = "commbench.p2p/1";

struct P2pOptions {
  JobOptions job;
  MeasurementOptions measurement{10, 2};
  PairSchedule schedule = PairSchedule::all_pairs;
  int rounds = 0;  // random schedule only
  std::uint64_t seed = 1;
  bool both_ways = false;
  bool per_rail = false;
  bool local = false;  // each node's GPUs from its first rank (p2p_local_run.hpp)
  std::vector<GpuCopyMethod> methods{GpuCopyMethod::copy_engine, GpuCopyMethod::sm_kernel, GpuCopyMethod::nccl};
  std::uint64_t bytes = std::uint64_t{4} << 20;
  std::uint64_t latency_bytes = 8;  // 0: no latency matrix
  std::uint64_t latency_iterations = 100;
  bool check = false;
  double outlier_fraction = kDefaultOutlierFraction;
  bool fail_on_outlier = false;

  std::vector<std::pair<std::string, std::string>> describe() const {
    std::vector<std::pair<std::string, std::string>> settings;
    if (local) {
      std::string names;
      for (const GpuCopyMethod method : methods) names += (names.empty() ? "" : ",") + std::string(name_of(method));
      settings.insert(settings.end(), {{"local", "1"}, {"methods", names}});
    } else {
      settings.insert(settings.end(), {{"schedule", std::string(name_of(schedule))}});
    }
    if (!local && schedule == PairSchedule::random)
      settings.insert(settings.end(), {{"rounds", std::to_string(rounds)}, {"seed", std::to_string(seed)}});
    settings.insert(settings.end(), {{"per_rail", per_rail ? "1" : "0"},
                                     {"both_ways", both_ways ? "1" : "0"},
                                     {"bytes", std::to_string(bytes)},
                                     {"iters", std::to_string(measurement.iterations)},
                                     {"warmup_iters", std::to_string(measurement.warmup)},
                                     {"latency_bytes", std::to_string(latency_bytes)},
                                     {"latency_iters", std::to_string(latency_iterations)},
                                     {"check", check ? "1" : "0"},
                                     {"outlier_fraction", significant_text(outlier_fraction)},
                                     {"fail_on_outlier", fail_on_outlier ? "1" : "0"},
                                     {"timeout_s", significant_text(job.timeout_seconds)}});
    return settings;
  }
};

std::vector<GpuCopyMethod> parse_copy_methods(const std::string& text, const char* flag) {
  std::vector<GpuCopyMethod> methods;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, end - start);
    const std::optional<GpuCopyMethod> method = copy_method_named(name);
    if (method && std::find(methods.begin(), methods.end(), *method) == methods.end()) methods.push_back(*method);
    if (!method) throw UsageError(fmt::format("{}: '{}' is not one of copy-engine, sm-copy, nccl", flag, name));
    start = end + 1;
  }
  return methods;
}

// --local measures inside nodes with CUDA: the flags that choose pairs of ranks or a
// backend mean nothing there, and a build without CUDA cannot do it at all.
void check_local_flags(const CLI::App& app, P2pOptions& options) {
  for (const char* flag : {"--schedule", "--rounds", "--seed", "--per-rail", "--backend"})
    if (app.count(flag) > 0) throw UsageError(fmt::format("{}: does not apply to --local", flag));
  if (options.latency_bytes != 0 && options.latency_bytes != 8)
    throw UsageError("--latency-bytes: --local times 8-byte loads; give 8 or 0 (no latency)");
  if (app.count("--bytes") == 0) options.bytes = std::uint64_t{64} << 20;
  if (!COMMBENCH_HAVE_NCCL)
    throw UsageError("--local: this bench-p2p was built without CUDA (configure with -DCOMMBENCH_WITH_NCCL=ON)");
}

void add_p2p_options(CLI::App& app, P2pOptions& options) {
  add_parsed_option(
      app, "--schedule", options.schedule, parse_pair_schedule,
      "all-pairs (every pair: n-1 rounds of n/2 pairs, n rounds for odd n), ring (each rank with its next), random "
      "(--rounds K random matchings)",
      "NAME")
      ->default_str("all-pairs");
  add_parsed_option(
      app, "--rounds", options.rounds,
      [](const std::string& text, const char* flag) {
        const std::uint64_t rounds = parse_count(text, flag, 1);
        if (rounds > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
          throw UsageError(fmt::format("{}: '{}' is more than {}", flag, text, std::numeric_limits<int>::max()));
        return static_cast<int>(rounds);
      },
      "Rounds of the random schedule", "K");
  add_parsed_option(
      app, "--seed", options.seed, count_at_least(0),
      "Seed of the random schedule (recorded, so a run can be repeated)", "N")
      ->default_str("1");
  app.add_flag("--per-rail", options.per_rail,
               "Only ranks of different nodes at the same place on their node meet (GPU i with GPU i: one NIC rail "
               "per pair); --schedule then pairs nodes, every rail of a node pair at once");
  app.add_flag("--local", options.local,
               "Inside each node instead of between ranks: the first rank of every node measures the GPUs it sees "
               "(GPU to GPU by each --methods, host to GPU and back from pinned memory on the GPU's NUMA node, on "
               "another one, and pageable; load latency; peer access), timed with CUDA events");
  add_parsed_option(
      app, "--methods", options.methods, parse_copy_methods,
      "--local: how GPUs move data to each other, a comma-separated list of copy-engine (cudaMemcpyPeerAsync), "
      "sm-copy (a kernel storing into the peer's memory), nccl (ncclSend/ncclRecv)",
      "LIST")
      ->default_str("copy-engine,sm-copy,nccl");
  app.add_flag("--both-ways", options.both_ways,
               "Each pair sends in both directions at once (bidirectional); default: one direction at a time");
  add_parsed_option(
      app, "-b,--bytes", options.bytes, parse_size,
      "Message size of the bandwidth matrix (binary units: 4M = 4194304); 64M with --local", "SIZE")
      ->default_str("4M");
  add_measurement_options(app, options.measurement, "Timed messages per pair and direction",
                          "Messages per pair before timing");
  add_parsed_option(
      app, "--latency-bytes", options.latency_bytes,
      [](const std::string& text, const char* flag) { return text == "0" ? 0 : parse_size(text, flag); },
      "Message size of the latency matrix; 0 skips it (--local times 8-byte loads: 8 or 0)", "SIZE")
      ->default_str("8");
  add_parsed_option(
      app, "--latency-iters", options.latency_iterations, count_at_least(1),
      "Timed exchanges per pair for the latency matrix (--local: 100 dependent loads each)", "N")
      ->default_str(std::to_string(options.latency_iterations));
  add_zero_or_one_switch(app, "-c,--check", options.check,
                         "Check every received byte once per round before timing it");
  add_parsed_option(
      app, "--outlier-fraction", options.outlier_fraction,
      [](const std::string& text, const char* flag) {
        const double fraction = parse_number(text, flag, false);
        if (!(fraction > 0 && fraction <= 1)) throw UsageError(fmt::format("{}: '{}' is not in (0, 1]", flag, text));
        return fraction;
      },
      "A cell below this fraction of the matrix's median or of its link's spec is an outlier", "F")
      ->default_str(significant_text(options.outlier_fraction));
  app.add_flag("--fail-on-outlier", options.fail_on_outlier, "Exit 1 when any cell is an outlier");
  add_job_options(app, options.job, "one round", "Write one row per measured pair and direction to this CSV file",
                  "Write provenance and every cell to this JSON file");
}

void validate_p2p_options(const CLI::App& app, P2pOptions& options) {
  if (options.schedule == PairSchedule::random && options.rounds == 0)
    throw UsageError("--schedule random: give --rounds K");
  if (options.schedule != PairSchedule::random && app.count("--rounds") > 0)
    throw UsageError("--rounds: applies to --schedule random only");
  if (options.local)
    check_local_flags(app, options);
  else if (app.count("--methods") > 0)
    throw UsageError("--methods: applies to --local only");
}

// A matrix row is 10 characters a rank: 64 ranks is already 650 columns, and 8192 would be
// 670 MB of text. Past this the report lists outliers only.
constexpr int kMostMatrixRanks = 64;

void print_report(const RunContext& context, const std::vector<PairCell>& cells, int ranks,
                  const std::vector<int>& slow, int round_count) {
  fmt::print("# {} {} (commit {}), {} rank{} on {} node{}, {} round{} of disjoint pairs\n", kProgram,
             commbench::version(), git_commit(), ranks, ranks == 1 ? "" : "s", context.nodes,
             context.nodes == 1 ? "" : "s", round_count, round_count == 1 ? "" : "s");
  fmt::print("{}", slurm_comment_line(context));
  for (const std::string& note : context.notes) fmt::print("# note: {}\n", note);
  if (!cells.empty() && cells.front().rail)
    fmt::print("# per rail: each rank meets the ranks at its place on the other nodes (GPU i with GPU i)\n");
  if (ranks > kMostMatrixRanks) {
    fmt::print("\n(the {} x {} matrices are not printed past {} ranks: the CSV and JSON hold every cell)\n", ranks,
               ranks, kMostMatrixRanks);
  }
  for (const PairDirection direction : {PairDirection::forward, PairDirection::both}) {
    if (ranks > kMostMatrixRanks) break;
    std::vector<PairCell> shown;
    for (const PairCell& cell : cells)
      if ((cell.direction == PairDirection::both) == (direction == PairDirection::both)) shown.push_back(cell);
    if (shown.empty()) continue;
    fmt::print("\nbandwidth (GB/s), {}, {} messages; rows send, columns receive; ! = outlier\n{}",
               direction == PairDirection::both ? "both directions at once" : "one direction at a time",
               format_size(cells.front().bytes), matrix_text(shown, ranks, false));
  }
  if (!cells.empty() && cells.front().latency_us && ranks <= kMostMatrixRanks)
    fmt::print("\nlatency (us): one exchange of a small message in both directions\n{}",
               matrix_text(cells, ranks, true));
  fmt::print("\n{}", findings_text(cells, slow));
  std::fflush(stdout);
}

// The cells as records, then the run's own sections, through the session's reporters
// (--csv streamed, --json replaced at the end; complete: false when interrupted).
// The cells as records, and the command's own sections; the shell adds the exit code.
void add_cells(JobSession& session, const std::vector<PairCell>& cells, RunSummary& summary,
               std::vector<std::pair<std::string, nlohmann::ordered_json>> sections) {
  for (const PairCell& cell : cells) session.add_record(cell_record(cell));
  summary.rows = cells.size();
  summary.sections = std::move(sections);
}

nlohmann::ordered_json rounds_json(const std::vector<PairRound>& rounds) {
  nlohmann::ordered_json round_list = nlohmann::ordered_json::array();
  for (const PairRound& round : rounds) {
    nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
    for (const auto& [first, second] : round) pairs.push_back({first, second});
    round_list.push_back(pairs);
  }
  return round_list;
}

// Rank 0 holds every cell (about 420 bytes each with its strings) and builds one CSV line
// per cell: past this many a plan is refused before it starts rather than running out of
// memory at the end. 16.8 M is 1024 nodes x 8 GPUs --per-rail, both directions, twice over;
// all-pairs over those 8192 ranks would be 67 M.
constexpr std::uint64_t kMostCells = std::uint64_t{1} << 24;

void require_cells_fit(const P2pOptions& options, std::uint64_t pairs, int ranks) {
  const std::uint64_t cells = pairs * (options.both_ways ? 1 : 2);
  if (cells > kMostCells)
    throw UsageError(
        fmt::format("--schedule {}: {} cells on {} ranks is more than the {} one report holds; use "
                    "--per-rail, --schedule random --rounds K, or fewer ranks per node",
                    name_of(options.schedule), cells, ranks, kMostCells));
}

// The schedule over ranks, or with --per-rail over nodes, each node pair's rails at once.
std::vector<PairRound> plan_rounds(const P2pOptions& options, const NodeRanks& nodes, int ranks) {
  if (!options.per_rail) {
    // Counted before the rounds are built: all-pairs over 8192 ranks is 268 MB of pairs.
    const auto count = static_cast<std::uint64_t>(ranks);
    const std::uint64_t pairs = options.schedule == PairSchedule::all_pairs ? count * (count - 1) / 2
                                : options.schedule == PairSchedule::ring    ? count
                                                                            : count / 2 * options.rounds;
    require_cells_fit(options, pairs, ranks);
    std::vector<PairRound> rounds = pair_rounds(options.schedule, ranks, options.rounds, options.seed);
    if (rounds.empty())
      throw UsageError(fmt::format(
          "needs at least 2 ranks (got {}): run it under mpirun or srun, or with --local inside one node", ranks));
    return rounds;
  }
  if (nodes.hosts.size() < 2)
    throw UsageError(fmt::format("--per-rail: needs ranks on at least 2 nodes (all {} ranks are on {})", ranks,
                                 nodes.hosts.empty() ? "no host" : nodes.hosts.front()));
  std::vector<PairRound> rounds = rail_rounds(
      pair_rounds(options.schedule, static_cast<int>(nodes.hosts.size()), options.rounds, options.seed), nodes);
  std::uint64_t pairs = 0;
  for (const PairRound& round : rounds) pairs += round.size();
  require_cells_fit(options, pairs, ranks);
  return rounds;
}

void print_local_report(const RunContext& context, const LocalRunResult& result) {
  fmt::print("# {} {} (commit {}), --local: the GPUs of {} node{}, each measured by its first rank\n", kProgram,
             commbench::version(), git_commit(), result.nodes.size(), result.nodes.size() == 1 ? "" : "s");
  fmt::print("{}", slurm_comment_line(context));
  for (const std::string& note : context.notes) fmt::print("# note: {}\n", note);
  for (const LocalNodeResult& node : result.nodes) {
    std::vector<PairCell> own;
    for (const PairCell& cell : result.cells)
      if (cell.src_host == node.node.host) own.push_back(cell);
    fmt::print("{}", local_report_text(node.node, own));
    if (node.node.bus_ids.size() > 1)
      fmt::print(
          "\npeer access: NV = direct over NVLink, P2P = direct over PCIe, host = staged through host memory\n{}",
          peer_access_text(node.peer_access));
    for (const std::string& note : node.notes) fmt::print("# note ({}): {}\n", node.node.host, note);
  }
  fmt::print("\n{}", findings_text(result.cells, {}));
  std::fflush(stdout);
}

nlohmann::ordered_json local_nodes_json(const LocalRunResult& result) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const LocalNodeResult& node : result.nodes)
    nodes.push_back({{"host", node.node.host},
                     {"rank", node.node.rank},
                     {"gpus", node.node.bus_ids},
                     {"gpu_numa", node.node.gpu_numa},
                     {"numa_nodes", node.node.numa_nodes},
                     {"peer_access", node.peer_access},
                     {"notes", node.notes}});
  return nodes;
}

int run_local(const P2pOptions& options, JobSession& session) {
  LocalRunSettings settings;
  settings.plan.methods = options.methods;
  settings.plan.both_ways = options.both_ways;
  settings.copy.bytes = options.bytes;
  settings.copy.warmup = options.measurement.warmup;
  settings.copy.iterations = options.measurement.iterations;
  settings.copy.check = options.check;
  // A hundred dependent loads per --latency-iters, so the chase kernel's start is spread
  // over many loads rather than counted in each.
  settings.latency_loads = options.latency_bytes == 0 ? 0 : options.latency_iterations * 100;
  RunContext context = session.run_context(options.describe());
  context.record_kind = "cell";
  LocalRunResult result = run_local_links(session, settings, [&] {
    session.open_outputs(file_outputs(options.job.files));
    session.begin_results(context);
  });
  flag_outliers(result.cells, options.outlier_fraction);
  const bool any_flagged =
      std::any_of(result.cells.begin(), result.cells.end(), [](const PairCell& cell) { return cell.flagged; });
  int exit_code = 0;
  if (result.wrong_bytes > 0 || (any_flagged && options.fail_on_outlier))
    exit_code = static_cast<int>(ExitCode::check_failed);
  session.step("writing the report", [&] {
    if (!session.reporting()) return;
    print_local_report(context, result);
    if (result.wrong_bytes > 0) fmt::print("check failed: {} bytes received wrong\n", result.wrong_bytes);
  });
  add_cells(session, result.cells, session.summary(), {{"mode", "local"}, {"nodes", local_nodes_json(result)}});
  session.end_run_with({.summarise = [exit_code](RunSummary&) { return exit_code; }});
  return session.finish_after([] {});
}

// bench-collectives' --nic-fraction default: a rail below 0.7 of the median rail falls short.
constexpr double kNicFraction = 0.7;

// Each host's rails in one direction of a round: "eth0 0.61 GB/s (busiest 1.2 GB/s)", with
// ", short" for one that fell short of the others.
std::map<std::string, std::string> nics_by_host(const std::vector<NodeNic>& nics) {
  std::map<std::string, std::string> by_host;
  for (const NodeNic& nic : nics) {
    if (!nic.rail) continue;
    std::string& text = by_host[nic.node];
    text += fmt::format("{}{} {} GB/s (busiest {} GB/s){}", text.empty() ? "" : ", ",
                        nic_label(nic.traffic.device, nic.traffic.port, nic.traffic.rdma),
                        significant_text(nic.bytes_per_second() / 1e9, 3),
                        significant_text(nic.peak_bytes_per_second / 1e9, 3), nic.flag.empty() ? "" : ", short");
  }
  return by_host;
}

// A flagged cell across nodes names the port that fell short while it ran, as
// bench-validate's FAIL lines do.
void name_short_nics(std::vector<PairCell>& cells) {
  for (PairCell& cell : cells) {
    if (!cell.flagged || cell.nics.find(", short") == std::string::npos) continue;
    std::string short_ports;
    std::size_t start = 0;
    while (start <= cell.nics.size()) {
      const std::size_t end = std::min(cell.nics.find("; ", start), cell.nics.size());
      const std::string part = cell.nics.substr(start, end - start);
      if (part.find(", short") != std::string::npos)
        short_ports += (short_ports.empty() ? "" : "; ") + part.substr(0, part.find(", short"));
      start = end + 2;
    }
    cell.flag_reason += "; NIC fell short: " + short_ports;
  }
}

int run_p2p(const P2pOptions& options, JobSession& session) {
  if (options.local) return run_local(options, session);
  // The backend by name alone: the NCCL-only settings are bench-collectives' flags.
  Backend& backend = session.create_backend(BackendRequest{options.job.backend});
  std::vector<PairRound> rounds;
  NodeRanks nodes;
  session.step("planning the pair rounds", [&] {
    nodes = group_ranks_by_node(backend.group().hostnames());
    rounds = plan_rounds(options, nodes, backend.ranks());
  });
  RunContext context = session.run_context(options.describe());
  context.record_kind = "cell";
  session.open_outputs(file_outputs(options.job.files));
  session.begin_results(context);
  PairMatrixSettings settings;
  settings.bytes = options.bytes;
  settings.iterations = options.measurement.iterations;
  settings.warmup = options.measurement.warmup;
  settings.latency_bytes = options.latency_bytes;
  settings.latency_iterations = options.latency_iterations;
  settings.check = options.check;
  settings.both_ways = options.both_ways;
  if (options.per_rail) settings.rail_of_rank = nodes.rail_of_rank;
  settings.phases = &session.phases();
  std::string probe_failure;
  std::optional<NodeTopology> node;
  {
    auto guard = session.watchdog().guard("probing the reporting node for the link model");
    node = probe_reporting_node(backend.group(), probe_failure);
  }
  // Across nodes each cell says what its ends' NICs carried: which port of a slow pair is
  // the slow one.
  NicWatch nic_watch(backend.group(), nodes.hosts.size() > 1, kNicFraction);
  if (node) nic_watch.name_nearest_gpus(gpus_nearest_each_nic(*node));
  PairMatrixRun run(
      backend, session.watchdog(), settings,
      [&](PairCell& cell, const std::vector<std::string>& bus_ids) {
        apply_link_model(node, probe_failure, bus_ids, backend.group().hostnames(), cell);
      },
      nic_watch.enabled() ? RoundNicWatch{[&] { nic_watch.start_case(); },
                                          [&](const std::string& what, const std::set<std::string>& hosts) {
                                            return nics_by_host(nic_watch.finish(what, hosts));
                                          }}
                          : RoundNicWatch{});
  std::vector<PairCell> cells;
  std::uint64_t wrong_bytes = 0;
  // The matrix as far as it was measured, after its last round or a signal.
  session.end_run_with({.summarise = [&](RunSummary& summary) {
    flag_outliers(cells, options.outlier_fraction);
    name_short_nics(cells);
    const std::vector<int> slow = slow_ranks(cells);
    const bool any_flagged = std::any_of(cells.begin(), cells.end(), [](const PairCell& cell) { return cell.flagged; });
    session.step("writing the report", [&] {
      if (!session.reporting()) return;
      print_report(context, cells, backend.ranks(), slow, static_cast<int>(rounds.size()));
      fmt::print("{}", nic_watch.rails_table());
      if (wrong_bytes > 0) fmt::print("check failed: {} bytes received wrong\n", wrong_bytes);
    });
    add_cells(session, cells, summary, {{"rounds", rounds_json(rounds)}, {"slow_ranks", slow}});
    const bool failed = wrong_bytes > 0 || (any_flagged && options.fail_on_outlier);
    return failed ? static_cast<int>(ExitCode::check_failed) : 0;
  }});
  return session.finish_after([&] { run.measure(rounds, cells, wrong_bytes); });
}

}  // namespace

int run_bench_p2p(int argc, char** argv) {
  const Command<P2pOptions> command{
      .name = kProgram,
      .description =
          "bench-p2p: point-to-point bandwidth and latency between every pair of ranks, in rounds of disjoint pairs, "
          "or with --local inside each node (GPU to GPU, host to GPU), each cell read against its link's spec; names "
          "the slow links, ranks and GPUs.",
      .schema = kSchema,
      .profile_category = ProfileCategory::p2p,
      .add_options = add_p2p_options,
      .validate = validate_p2p_options,
      .run = run_p2p,
      // --version also says which backends (and so whether --local's CUDA) this binary has.
      .version_lists_backends = true,
  };
  return run_command(command, argc, argv);
}

}  // namespace commbench
