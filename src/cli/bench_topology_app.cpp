#include "commbench/cli/bench_topology_app.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/cli/command_shell.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/analysis/live_probe.hpp"
#include "commbench/cli/topology_options.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"
#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/node_comparison.hpp"
#include "commbench/topology/topology_fields.hpp"
#include "commbench/topology/topology_json.hpp"
#include "commbench/topology/topology_matrix.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-topology";
// 2: run details moved into the `provenance` object every command's JSON shares.
// 3: `complete` and the `links` records (the CSV's rows) joined the document.
constexpr const char* kTopologySchema = "commbench.topology/3";

// The layout the table models: every GPU of the node, one rank each, on `nodes` nodes;
// without GPUs, this job's host ranks per node.
JobLayout modelled_layout(const NodeTopology& node, int nodes, int host_ranks_per_node) {
  JobLayout layout;
  layout.nodes = nodes;
  for (const Gpu& gpu : node.gpus) layout.gpu_bus_ids.push_back(gpu.bus_id);
  layout.ranks_per_node = node.gpus.empty() ? host_ranks_per_node : static_cast<int>(node.gpus.size());
  return layout;
}

std::string bandwidth_table(const NodeTopology& node, const JobLayout& layout, nlohmann::ordered_json& json_rows) {
  std::string text = fmt::format(
      "Theoretical busbw, {} node{} x {} rank{} {} (spec: link signalling rates; achievable: NCCL's link model):\n",
      layout.nodes, layout.nodes == 1 ? "" : "s", layout.ranks_per_node, layout.ranks_per_node == 1 ? "" : "s",
      layout.gpu_bus_ids.empty() ? "in host memory" : "(one per GPU)");
  TextTable table({{{"collective"}, Align::left, 14},
                   {{"spec GB/s"}, Align::right, 10},
                   {{"achievable"}, Align::right, 12},
                   {{"bottleneck"}, Align::left, 0, 2}},
                  "  ", "  ");
  const auto figure = [](const std::optional<double>& gbps) { return gbps ? significant_text(*gbps, 4) : "?"; };
  for (const Collective op : all_collectives()) {
    const TheoreticalBusbw bw = theoretical_busbw(op, node, layout);
    table.add_row({std::string(name_of(op)), figure(bw.spec_gbps), figure(bw.achievable_gbps), bw.basis});
    nlohmann::ordered_json row = {{"collective", name_of(op)},
                                  {"nodes", layout.nodes},
                                  {"ranks_per_node", layout.ranks_per_node},
                                  {"spec_busbw_gbps", nullptr},
                                  {"achievable_busbw_gbps", nullptr},
                                  {"algorithm", bw.algorithm},
                                  {"basis", bw.basis}};
    if (bw.spec_gbps) row["spec_busbw_gbps"] = *bw.spec_gbps;
    if (bw.achievable_gbps) row["achievable_busbw_gbps"] = *bw.achievable_gbps;
    json_rows.push_back(row);
  }
  return text + table.render();
}

// What rank 0 learns from the gathered models.
struct TopologyReport {
  std::vector<NodeTopology> nodes;
  nlohmann::ordered_json bandwidth_rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json findings = nlohmann::ordered_json::object();
  nlohmann::ordered_json differences = nlohmann::ordered_json::array();
  std::vector<std::string> problems;  // the FAIL lines
  std::string bandwidth_text;         // the console's busbw tables
};

TopologyReport judge_nodes(const TopologyOptions& options, const std::vector<std::optional<NodeTopology>>& gathered,
                           int host_ranks_per_node) {
  TopologyReport report;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    if (gathered[r]) report.nodes.push_back(topology_as_written(*gathered[r], fmt::format("model of rank {}", r)));
  }
  const NodeTopology& first = report.nodes.front();
  const int model_nodes = options.model_nodes > 0 ? options.model_nodes : static_cast<int>(report.nodes.size());
  report.bandwidth_text = bandwidth_table(first, modelled_layout(first, 1, host_ranks_per_node), report.bandwidth_rows);
  if (model_nodes > 1) {
    report.bandwidth_text +=
        "\n" + bandwidth_table(first, modelled_layout(first, model_nodes, host_ranks_per_node), report.bandwidth_rows);
  }
  for (const NodeTopology& node : report.nodes) {
    const std::vector<std::string> found = node_findings(node);
    report.findings[node.hostname] = found;
    for (const std::string& f : found) report.problems.push_back(node.hostname + ": " + f);
  }
  for (const NodeDifference& d : compare_nodes(report.nodes)) {
    report.problems.push_back(describe(d));
    report.differences.push_back({{"host", d.hostname},
                                  {"what", d.key},
                                  {"value", d.value},
                                  {"majority", d.majority},
                                  {"majority_nodes", d.majority_nodes},
                                  {"nodes", d.nodes}});
  }
  return report;
}

// The console: the first node, the bandwidth tables and every problem.
void print_report(const TopologyReport& report, const RunContext& context, double probe_seconds) {
  const NodeTopology& first = report.nodes.front();
  const char* plural = report.nodes.size() == 1 ? "" : "s";
  fmt::print("# {} {} (commit {}), {} node{} probed in {} s\n", kProgram, commbench::version(), git_commit(),
             report.nodes.size(), plural, fixed_text(probe_seconds, 2));
  fmt::print("{}# node {}, from: {}\n\n", slurm_comment_line(context), first.hostname, fmt::join(first.sources, "; "));
  fmt::print("{}\n{}\n", render_matrix(first), render_nic_table(first));
  for (const std::string& line : describe_non_compute_nics(first, nic_roles(first))) fmt::print("note: {}\n", line);
  for (const std::string& unknown : first.unknowns) fmt::print("unknown: {}\n", unknown);
  fmt::print("\n{}\n", report.bandwidth_text);
  if (report.problems.empty())
    fmt::print("All {} node{} consistent; no degraded GPU link or NIC port found.\n", report.nodes.size(), plural);
  for (const std::string& p : report.problems) fmt::print("FAIL {}\n", p);
  std::fflush(stdout);
}

// The links of every node as records, then the document's own sections.
void write_results(JobSession& session, const TopologyReport& report, double probe_seconds, bool complete,
                   int exit_code) {
  for (const NodeTopology& node : report.nodes) {
    for (const LinkRow& row : link_rows(node)) session.add_record(link_record(row));
  }
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeTopology& node : report.nodes) {
    if (session.reporting()) nodes.push_back(nlohmann::ordered_json::parse(topology_to_json_text(node)));
  }
  RunSummary summary;
  summary.complete = complete;
  summary.exit_code = exit_code;
  summary.sections = {{"probe_seconds", probe_seconds},
                      {"nodes", std::move(nodes)},
                      {"theoretical_busbw", report.bandwidth_rows},
                      {"findings", report.findings},
                      {"differences", report.differences},
                      {"exit_code", exit_code}};
  session.finish_results(summary);
}

int run_topology(const TopologyOptions& options, JobSession& session) {
  Bootstrap& world = session.world();
  // The files open before the probe, so a stop during it leaves them whole; a model that
  // cannot be read is bad input, and the session removes them again.
  RunContext context = session.run_context(options.describe());
  context.record_kind = "link";
  session.begin_results(file_outputs(options.job.files), context);
  const auto started = std::chrono::steady_clock::now();
  // One rank per node probes: the node is the same for all its ranks, and several hwloc
  // discoveries at once would only slow each other down.
  std::optional<NodeTopology> own_model;
  session.begin_phase("probing the nodes");
  session.step("probing this node", [&] {
    if (world.local_rank() != 0) return;
    NodeTopology node =
        probe_node(probe_options_for_this_build(options.hwloc_xml, options.sysfs_root, options.nccl_topo_xml));
    if (options.hwloc_xml.empty() && options.nccl_topo_xml.empty()) node.hostname = world.hostname();
    own_model = std::move(node);
  });
  const double probe_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<std::optional<NodeTopology>> gathered;
  int signal_number = 0;
  {
    auto guard = session.watchdog().guard("gathering the nodes' models");
    gathered = all_gather_as(world, own_model);
    // A SIGINT/SIGTERM during the probe: the models made are kept, the run is incomplete.
    signal_number = signal_of_agreement_key(world.max(interruption_agreement_key()));
  }
  int exit_code = 0;
  TopologyReport report;
  session.step("judging the nodes", [&] {
    if (!session.reporting()) return;
    report = judge_nodes(options, gathered, world.local_size());
    exit_code = report.problems.empty() ? 0 : static_cast<int>(ExitCode::check_failed);
    if (signal_number != 0) exit_code = static_cast<int>(Interrupted(signal_number).exit_code());
  });
  session.step("writing the report", [&] {
    if (session.reporting()) print_report(report, context, probe_seconds);
  });
  write_results(session, report, probe_seconds, signal_number == 0, exit_code);
  if (signal_number != 0) session.say_interrupted(Interrupted(signal_number));
  auto guard = session.watchdog().guard("agreeing on the exit code");
  return world.max(exit_code);
}

}  // namespace

int run_bench_topology(int argc, char** argv) {
  const Command<TopologyOptions> command{
      .name = kProgram,
      .description =
          "bench-topology: show how GPUs, NICs and CPUs of each node are connected (like nvidia-smi topo -m and "
          "ibstat), with the spec bandwidth of every link and the theoretical busbw of each collective.\n"
          "Under mpirun/srun one rank per node probes and rank 0 reports nodes that differ from the majority.\n"
          "Exit 0: consistent; 1: a node differs or a device is degraded; 2: bad input; 3: runtime error; 4: timeout.",
      .schema = kTopologySchema,
      .profile_category = ProfileCategory::topology,
      .add_options = add_topology_options,
      .validate = validate_topology_options,
      .run = run_topology,
      .read_files =
          [](const TopologyOptions& options) {
            return NamedPaths{{options.hwloc_xml, "--hwloc-xml"}, {options.nccl_topo_xml, "--nccl-topo-xml"}};
          },
  };
  return run_command(command, argc, argv);
}

}  // namespace commbench
