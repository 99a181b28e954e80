#include "commbench/cli/topology_options.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

std::vector<std::pair<std::string, std::string>> TopologyOptions::describe() const {
  std::vector<std::pair<std::string, std::string>> s;
  if (!hwloc_xml.empty()) s.emplace_back("hwloc_xml", hwloc_xml);
  if (!sysfs_root.empty()) s.emplace_back("sysfs_root", sysfs_root);
  if (!nccl_topo_xml.empty()) s.emplace_back("nccl_topo_xml", nccl_topo_xml);
  if (model_nodes > 0) s.emplace_back("nodes", std::to_string(model_nodes));
  return s;
}

ParsedTopologyCommandLine parse_topology_command_line(int argc, const char* const* argv) {
  CLI::App app{
      "bench-topology: show how GPUs, NICs and CPUs of each node are connected (like nvidia-smi topo -m and "
      "ibstat), with the spec bandwidth of every link and the theoretical busbw of each collective.\n"
      "Under mpirun/srun one rank per node probes and rank 0 reports nodes that differ from the majority.\n"
      "Exit 0: consistent; 1: a node differs or a device is degraded; 2: bad input; 3: runtime error; 4: timeout."};
  app.name("bench-topology");
  TopologyOptions o;
  std::string timeout = "300", nodes;
  bool version = false;
  app.add_option("--hwloc-xml", o.hwloc_xml, "Read the node from an hwloc XML export (lstopo --of xml) instead of probing");
  app.add_option("--sysfs-root", o.sysfs_root, "Read NIC ports from this directory shaped like /sys");
  app.add_option("--nccl-topo-xml", o.nccl_topo_xml, "Read the node from the XML NCCL writes with NCCL_TOPO_DUMP_FILE");
  app.add_option("--json", o.json_path, "Write the full model of every node to this JSON file");
  app.add_option("--csv", o.csv_path, "Write one row per link of every node to this CSV file");
  app.add_flag("--force", o.force, "Overwrite existing --csv/--json files");
  app.add_option("--nodes", nodes, "Node count for the theoretical busbw table [default: the nodes of this job]");
  app.add_option("-T,--timeout", timeout, "Seconds the probe and the gathering may take before exit 4; 0 disables")
      ->capture_default_str();
  app.add_flag("-V,--version", version, "Print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return {std::nullopt, app.help()};
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    const auto newline = message.find('\n');
    if (newline != std::string::npos) message.resize(newline);
    throw UsageError(message + " (see --help)");
  }
  if (version) return {std::nullopt, std::string("bench-topology ") + commbench::version() + " (commit " + git_commit() + ")"};

  for (const auto& [flag, value] : {std::pair<const char*, std::string*>{"--hwloc-xml", &o.hwloc_xml},
                                    {"--sysfs-root", &o.sysfs_root},
                                    {"--nccl-topo-xml", &o.nccl_topo_xml},
                                    {"--json", &o.json_path},
                                    {"--csv", &o.csv_path}}) {
    if (app.count(flag) > 0 && value->empty()) throw UsageError(std::string(flag) + ": empty file name");
  }
  std::error_code ec;
  if (!o.sysfs_root.empty() && !std::filesystem::is_directory(o.sysfs_root, ec)) {
    throw UsageError("--sysfs-root " + o.sysfs_root + ": not a directory");
  }
  if (!o.hwloc_xml.empty() && !o.nccl_topo_xml.empty()) {
    throw UsageError("--hwloc-xml and --nccl-topo-xml both describe the node's PCI tree: give one of them");
  }
  o.timeout_seconds = parse_timeout_seconds(timeout);
  check_distinct_outputs(o.csv_path, o.json_path);
  if (!nodes.empty()) {
    const std::uint64_t count = parse_count(nodes, "--nodes", 1);
    if (count > 100000) throw UsageError("--nodes: at most 100000 (got " + nodes + ")");
    o.model_nodes = static_cast<int>(count);
  }
  return {o, ""};
}

}  // namespace commbench
