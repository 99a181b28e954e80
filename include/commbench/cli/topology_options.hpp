// The command line of bench-topology.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commbench {

struct TopologyOptions {
  std::string hwloc_xml;      // --hwloc-xml FILE
  std::string sysfs_root;     // --sysfs-root DIR
  std::string nccl_topo_xml;  // --nccl-topo-xml FILE
  std::string json_path;      // --json FILE: the full model of every node
  std::string csv_path;       // --csv FILE: one row per link
  bool force = false;
  double timeout_seconds = 300;
  int model_nodes = 0;  // --nodes N: node count for the bandwidth model; 0 = this job's
  std::vector<std::pair<std::string, std::string>> describe() const;
};

struct ParsedTopologyCommandLine {
  std::optional<TopologyOptions> options;  // empty when help or version was asked for
  std::string text_to_print;
};

// Throws UsageError with a one-line message naming the flag.
ParsedTopologyCommandLine parse_topology_command_line(int argc, const char* const* argv);

}  // namespace commbench
