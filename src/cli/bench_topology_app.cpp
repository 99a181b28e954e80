#include "commbench/cli/bench_topology_app.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/job_runtime.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/cli/job_session.hpp"
#include "commbench/cli/live_probe.hpp"
#include "commbench/cli/topology_options.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/core/profile_range.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance_json.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/node_comparison.hpp"
#include "commbench/topology/topology_json.hpp"
#include "commbench/topology/topology_matrix.hpp"

namespace commbench {
namespace {

constexpr const char* kProgram = "bench-topology";
// 2: run details moved into the `provenance` object every command's JSON shares.
constexpr const char* kTopologySchema = "commbench.topology/2";

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
  std::string text = "Theoretical busbw, " + std::to_string(layout.nodes) + " node" + (layout.nodes == 1 ? "" : "s") +
                     " x " + std::to_string(layout.ranks_per_node) + " rank" + (layout.ranks_per_node == 1 ? "" : "s") +
                     (layout.gpu_bus_ids.empty() ? " in host memory" : " (one per GPU)") +
                     " (spec: link signalling rates; achievable: NCCL's link model):\n";
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

int report(const TopologyOptions& options, const RunContext& context, Bootstrap& world,
           const std::vector<std::string>& gathered, double probe_seconds);

int run_in_job(const TopologyOptions& options, JobStart& start) {
  set_profile_category(ProfileCategory::topology);
  JobSession session(start, kTopologySchema);
  Bootstrap& world = session.world();
  const auto started = std::chrono::steady_clock::now();

  // One rank per node probes: the node is the same for all its ranks, and several hwloc
  // discoveries at once would only slow each other down.
  std::string own_model;
  session.step("probing this node", [&] {
    if (world.local_rank() != 0) return;
    NodeTopology node =
        probe_node(probe_options_for_this_build(options.hwloc_xml, options.sysfs_root, options.nccl_topo_xml));
    if (options.hwloc_xml.empty() && options.nccl_topo_xml.empty()) node.hostname = world.hostname();
    own_model = topology_to_json_text(node);
  });
  const double probe_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<std::string> gathered;
  {
    auto guard = session.watchdog().guard("gathering the nodes' models");
    gathered = world.all_gather(own_model);
  }
  const RunContext context = session.run_context(options.describe());
  int exit_code = 0;
  session.step("writing the report", [&] {
    if (session.reporting()) exit_code = report(options, context, world, gathered, probe_seconds);
  });
  auto guard = session.watchdog().guard("agreeing on the exit code");
  return world.max(exit_code);
}

// Rank 0: prints the first node, the bandwidth table and every problem, writes the files.
int report(const TopologyOptions& options, const RunContext& context, Bootstrap& world,
           const std::vector<std::string>& gathered, double probe_seconds) {
  std::vector<NodeTopology> nodes;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    if (!gathered[r].empty())
      nodes.push_back(topology_from_json_text(gathered[r], "model of rank " + std::to_string(r)));
  }
  const NodeTopology& first = nodes.front();
  const int model_nodes = options.model_nodes > 0 ? options.model_nodes : static_cast<int>(nodes.size());

  std::printf("# %s %s (commit %s), %zu node%s probed in %s s\n", kProgram, commbench::version(), git_commit(),
              nodes.size(), nodes.size() == 1 ? "" : "s", fixed_text(probe_seconds, 2).c_str());
  std::printf("%s", slurm_comment_line(context).c_str());
  std::printf("# node %s, from: ", first.hostname.c_str());
  for (std::size_t i = 0; i < first.sources.size(); ++i) std::printf("%s%s", i ? "; " : "", first.sources[i].c_str());
  std::printf("\n\n%s\n%s\n", render_matrix(first).c_str(), render_nic_table(first).c_str());
  for (const std::string& line : describe_non_compute_nics(first, nic_roles(first)))
    std::printf("note: %s\n", line.c_str());
  for (const std::string& unknown : first.unknowns) std::printf("unknown: %s\n", unknown.c_str());

  nlohmann::ordered_json bandwidth_rows = nlohmann::ordered_json::array();
  std::printf("\n%s", bandwidth_table(first, modelled_layout(first, 1, world.local_size()), bandwidth_rows).c_str());
  if (model_nodes > 1) {
    std::printf(
        "\n%s",
        bandwidth_table(first, modelled_layout(first, model_nodes, world.local_size()), bandwidth_rows).c_str());
  }

  std::vector<std::string> problems;
  nlohmann::ordered_json findings = nlohmann::ordered_json::object();
  for (const NodeTopology& node : nodes) {
    const std::vector<std::string> found = node_findings(node);
    findings[node.hostname] = found;
    for (const std::string& f : found) problems.push_back(node.hostname + ": " + f);
  }
  nlohmann::ordered_json differences = nlohmann::ordered_json::array();
  for (const NodeDifference& d : compare_nodes(nodes)) {
    problems.push_back(describe(d));
    differences.push_back({{"host", d.hostname},
                           {"what", d.key},
                           {"value", d.value},
                           {"majority", d.majority},
                           {"majority_nodes", d.majority_nodes},
                           {"nodes", d.nodes}});
  }
  std::printf("\n");
  if (problems.empty()) {
    std::printf("All %zu node%s consistent; no degraded GPU link or NIC port found.\n", nodes.size(),
                nodes.size() == 1 ? "" : "s");
  } else {
    for (const std::string& p : problems) std::printf("FAIL %s\n", p.c_str());
  }
  std::fflush(stdout);
  const int exit_code = problems.empty() ? 0 : static_cast<int>(ExitCode::check_failed);

  if (!options.csv_path.empty()) {
    std::string csv = slurm_comment_line(context) + links_csv_header() + "\n";
    for (const NodeTopology& node : nodes) {
      for (const LinkRow& row : link_rows(node)) csv += to_csv_line(row) + "\n";
    }
    write_file_atomically(options.csv_path, csv, "--csv");
  }
  if (!options.json_path.empty()) {
    nlohmann::ordered_json doc;
    doc["schema"] = context.schema;
    doc["provenance"] = provenance_json(context);
    doc["probe_seconds"] = probe_seconds;
    doc["nodes"] = nlohmann::ordered_json::array();
    for (const std::string& text : gathered) {
      if (!text.empty()) doc["nodes"].push_back(nlohmann::ordered_json::parse(text));
    }
    doc["theoretical_busbw"] = bandwidth_rows;
    doc["findings"] = findings;
    doc["differences"] = differences;
    doc["exit_code"] = exit_code;
    write_file_atomically(options.json_path,
                          doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n", "--json");
  }
  return exit_code;
}

}  // namespace

int run_bench_topology(int argc, char** argv) {
  ParsedTopologyCommandLine parsed;
  const auto prepare = [&]() -> std::optional<std::string> {
    parsed = parse_topology_command_line(argc, argv);
    if (!parsed.options) return parsed.text_to_print;
    // Only the reporting process writes files, so only its file system is asked.
    if (!is_reporting_process()) return std::nullopt;
    const TopologyOptions& options = *parsed.options;
    const std::pair<std::string, const char*> outputs[] = {{options.csv_path, "--csv"}, {options.json_path, "--json"}};
    prepare_replaced_outputs(outputs, options.force);
    return std::nullopt;
  };
  return run_command(
      kProgram, argc, argv, false, prepare, [&] { return parsed.options->timeout_seconds; },
      [&](JobStart& start) { return run_in_job(*parsed.options, start); });
}

}  // namespace commbench
