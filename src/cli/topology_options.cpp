#include "commbench/cli/topology_options.hpp"

#include <filesystem>

#include "command_line_parser.hpp"

#include "commbench/cli/flag_values.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

std::vector<std::pair<std::string, std::string>> TopologyOptions::describe() const {
  std::vector<std::pair<std::string, std::string>> settings;
  if (!hwloc_xml.empty()) settings.emplace_back("hwloc_xml", hwloc_xml);
  if (!sysfs_root.empty()) settings.emplace_back("sysfs_root", sysfs_root);
  if (!nccl_topo_xml.empty()) settings.emplace_back("nccl_topo_xml", nccl_topo_xml);
  if (model_nodes > 0) settings.emplace_back("nodes", std::to_string(model_nodes));
  return settings;
}

void add_topology_options(CLI::App& app, TopologyOptions& options) {
  const auto file_name = [](const char* flag) {
    return [flag](const std::string& text) { return non_empty_file_name(text, flag); };
  };
  add_parsed_option(app, "--hwloc-xml", options.hwloc_xml, file_name("--hwloc-xml"),
                    "Read the node from an hwloc XML export (lstopo --of xml) instead of probing", "FILE");
  add_parsed_option(
      app, "--sysfs-root", options.sysfs_root,
      [](const std::string& text) {
        std::error_code ec;
        if (!std::filesystem::exists(non_empty_file_name(text, "--sysfs-root"), ec))
          throw UsageError("--sysfs-root " + text + ": does not exist");
        if (!std::filesystem::is_directory(text, ec)) throw UsageError("--sysfs-root " + text + ": not a directory");
        return text;
      },
      "Read NIC ports from this directory shaped like /sys", "DIR");
  add_parsed_option(app, "--nccl-topo-xml", options.nccl_topo_xml, file_name("--nccl-topo-xml"),
                    "Read the node from the XML NCCL writes with NCCL_TOPO_DUMP_FILE", "FILE");
  add_result_file_options(app, options.job.files, "Write one row per link of every node to this CSV file",
                          "Write the full model of every node to this JSON file");
  add_parsed_option(
      app, "--nodes", options.model_nodes,
      [](const std::string& text) {
        const std::uint64_t count = parse_count(text, "--nodes", 1);
        if (count > 100000) throw UsageError("--nodes: at most 100000 (got " + text + ")");
        return static_cast<int>(count);
      },
      "Node count for the theoretical busbw table [default: the nodes of this job]", "N");
  add_timeout_option(app, options.job.timeout_seconds, "the probe and the gathering");
}

void validate_topology_options(const CLI::App&, TopologyOptions& options) {
  if (!options.hwloc_xml.empty() && !options.nccl_topo_xml.empty())
    throw UsageError("--hwloc-xml and --nccl-topo-xml both describe the node's PCI tree: give one of them");
}

}  // namespace commbench
