#include "commbench/cli/topology_options.hpp"

#include <filesystem>

#include "command_line_parser.hpp"

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {

std::vector<std::pair<std::string, std::string>> TopologyOptions::describe() const {
  std::vector<std::pair<std::string, std::string>> settings;
  if (!hwloc_xml.empty()) settings.emplace_back("hwloc_xml", hwloc_xml);
  if (!sysfs_root.empty()) settings.emplace_back("sysfs_root", sysfs_root);
  if (!nccl_topo_xml.empty()) settings.emplace_back("nccl_topo_xml", nccl_topo_xml);
  if (model_nodes > 0) settings.emplace_back("nodes", std::to_string(model_nodes));
  return settings;
}

ParsedTopologyCommandLine parse_topology_command_line(int argc, const char* const* argv) {
  CLI::App app{
      "bench-topology: show how GPUs, NICs and CPUs of each node are connected (like nvidia-smi topo -m and "
      "ibstat), with the spec bandwidth of every link and the theoretical busbw of each collective.\n"
      "Under mpirun/srun one rank per node probes and rank 0 reports nodes that differ from the majority.\n"
      "Exit 0: consistent; 1: a node differs or a device is degraded; 2: bad input; 3: runtime error; 4: timeout."};
  app.name("bench-topology");
  // Values are parsed as CLI11 meets them, each by the parser whose message names the flag.
  TopologyOptions options;
  const auto file_name = [](const char* flag) {
    return [flag](const std::string& text) { return non_empty_file_name(text, flag); };
  };
  add_parsed_option(app, "--hwloc-xml", options.hwloc_xml, file_name("--hwloc-xml"),
                    "Read the node from an hwloc XML export (lstopo --of xml) instead of probing", "FILE");
  add_parsed_option(
      app, "--sysfs-root", options.sysfs_root,
      [](const std::string& text) {
        std::error_code ec;
        if (!std::filesystem::is_directory(non_empty_file_name(text, "--sysfs-root"), ec))
          throw UsageError("--sysfs-root " + text + ": not a directory");
        return text;
      },
      "Read NIC ports from this directory shaped like /sys", "DIR");
  add_parsed_option(app, "--nccl-topo-xml", options.nccl_topo_xml, file_name("--nccl-topo-xml"),
                    "Read the node from the XML NCCL writes with NCCL_TOPO_DUMP_FILE", "FILE");
  add_parsed_option(app, "--json", options.json_path, file_name("--json"),
                    "Write the full model of every node to this JSON file", "FILE");
  add_parsed_option(app, "--csv", options.csv_path, file_name("--csv"),
                    "Write one row per link of every node to this CSV file", "FILE");
  app.add_flag("--force", options.force, "Overwrite existing --csv/--json files");
  add_parsed_option(
      app, "--nodes", options.model_nodes,
      [](const std::string& text) {
        const std::uint64_t count = parse_count(text, "--nodes", 1);
        if (count > 100000) throw UsageError("--nodes: at most 100000 (got " + text + ")");
        return static_cast<int>(count);
      },
      "Node count for the theoretical busbw table [default: the nodes of this job]", "N");
  add_timeout_option(app, options.timeout_seconds, "the probe and the gathering");
  const CommandLineOutcome outcome = parse_command_line(app, argc, argv, "bench-topology");
  if (outcome.request != CommandLineRequest::run) return {std::nullopt, outcome.text};
  // What involves more than one flag.
  if (!options.hwloc_xml.empty() && !options.nccl_topo_xml.empty()) {
    throw UsageError("--hwloc-xml and --nccl-topo-xml both describe the node's PCI tree: give one of them");
  }
  check_distinct_outputs(options.csv_path, options.json_path);
  return {options, ""};
}

}  // namespace commbench
