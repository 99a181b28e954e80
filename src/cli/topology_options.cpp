#include "commbench/cli/topology_options.hpp"

#include <filesystem>

#include <fmt/format.h>

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
  add_parsed_option(app, "--hwloc-xml", options.hwloc_xml, non_empty_file_name,
                    "Read the node from an hwloc XML export (lstopo --of xml) instead of probing", "FILE");
  add_parsed_option(
      app, "--sysfs-root", options.sysfs_root,
      [](const std::string& text, const char* flag) {
        std::error_code ec;
        if (!std::filesystem::exists(non_empty_file_name(text, flag), ec))
          throw UsageError(fmt::format("{} {}: does not exist", flag, text));
        if (!std::filesystem::is_directory(text, ec)) throw UsageError(fmt::format("{} {}: not a directory", flag, text));
        return text;
      },
      "Read NIC ports from this directory shaped like /sys", "DIR");
  add_parsed_option(app, "--nccl-topo-xml", options.nccl_topo_xml, non_empty_file_name,
                    "Read the node from the XML NCCL writes with NCCL_TOPO_DUMP_FILE", "FILE");
  add_result_file_options(app, options.job.files, "Write one row per link of every node to this CSV file",
                          "Write the full model of every node to this JSON file");
  add_parsed_option(
      app, "--nodes", options.model_nodes,
      [](const std::string& text, const char* flag) {
        const std::uint64_t count = parse_count(text, flag, 1);
        if (count > 100000) throw UsageError(fmt::format("{}: at most 100000 (got {})", flag, text));
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
