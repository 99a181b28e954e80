// The command line of bench-topology.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "commbench/cli/command_shell.hpp"

namespace commbench {

struct TopologyOptions {
  std::string hwloc_xml;      // --hwloc-xml FILE
  std::string sysfs_root;     // --sysfs-root DIR
  std::string nccl_topo_xml;  // --nccl-topo-xml FILE
  int model_nodes = 0;        // --nodes N: node count for the bandwidth model; 0 = this job's
  JobOptions job;             // -T, --csv (one record per link), --json (every node's model), --force
  std::vector<std::pair<std::string, std::string>> describe() const;
};

// Declares bench-topology's flags: values are parsed as CLI11 meets them, each by the
// parser whose message names the flag.
void add_topology_options(CLI::App& app, TopologyOptions& options);
// What involves more than one flag; UsageError naming them.
void validate_topology_options(const CLI::App& app, TopologyOptions& options);

}  // namespace commbench
