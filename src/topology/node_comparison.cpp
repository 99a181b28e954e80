#include "commbench/topology/node_comparison.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

std::string rate_text(double gbit) { return significant_text(gbit) + " Gb/s"; }

// The PCIe link of a GPU: generation and width when a source gave them, else bandwidth.
std::string pcie_text(const NodeTopology& node, const Gpu& gpu) {
  // NVML's current generation drops while a GPU idles; the maximum generation with the
  // current width is what stays comparable between nodes.
  if (gpu.pcie_generation_max > 0 && gpu.pcie_width_current > 0) {
    return fmt::format("Gen{} x{}", gpu.pcie_generation_max, gpu.pcie_width_current);
  }
  if (gpu.pci < 0) return "";
  const PciObject& pci = node.pci[static_cast<std::size_t>(gpu.pci)];
  if (pci.link_generation > 0 && pci.link_width > 0) {
    return fmt::format("Gen{} x{}", pci.link_generation, pci.link_width);
  }
  return pci.link_gbps > 0 ? format_gbps(pci.link_gbps) : "";
}

double pcie_gbps(const NodeTopology& node, const Gpu& gpu) {
  return gpu.pci < 0 ? 0 : node.pci[static_cast<std::size_t>(gpu.pci)].link_gbps;
}

int total_nvlinks(const NodeTopology& node, const Gpu& gpu) {
  int links = 0;
  for (const NvlinkGroup& group : node.nvlinks) links += group.gpu == gpu.index ? group.links : 0;
  return links;
}

std::string port_text(const NicPort& port) {
  std::string text = port.state.empty() ? "?" : port.state;
  if (port.active() && port.rate_gbit > 0) {
    text += ' ';
    text += rate_text(port.rate_gbit);
  }
  return text;
}

}  // namespace

std::vector<NodeFact> node_facts(const NodeTopology& node) {
  std::vector<NodeFact> facts;
  facts.push_back({"GPU count", std::to_string(node.gpus.size())});
  for (const Gpu& gpu : node.gpus) {
    const std::string id = fmt::format("GPU {}", gpu.index);
    facts.push_back({id + " model", gpu.model});
    const std::string pcie = pcie_text(node, gpu);
    if (!pcie.empty()) facts.push_back({id + " PCIe link", pcie});
    facts.push_back({id + " NVLinks", std::to_string(total_nvlinks(node, gpu))});
  }
  int rdma = 0;
  for (const Nic& nic : node.nics) rdma += nic.rdma ? 1 : 0;
  facts.push_back({"RDMA NIC count", std::to_string(rdma)});
  for (const Nic& nic : node.nics) {
    if (!nic.rdma) continue;
    for (const NicPort& port : nic.ports) {
      facts.push_back({fmt::format("{} port {}", nic.name, port.port), port_text(port)});
    }
  }
  return facts;
}

std::vector<NodeDifference> compare_nodes(const std::vector<NodeTopology>& nodes) {
  std::vector<NodeDifference> differences;
  if (nodes.size() < 2) return differences;
  // key -> value per node ("absent" when a node lacks the fact), keys in first-seen order.
  std::vector<std::string> keys;
  std::vector<std::map<std::string, std::string>> values(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const NodeFact& fact : node_facts(nodes[i])) {
      if (std::find(keys.begin(), keys.end(), fact.key) == keys.end()) keys.push_back(fact.key);
      values[i][fact.key] = fact.value;
    }
  }
  const int total = static_cast<int>(nodes.size());
  for (const std::string& key : keys) {
    std::map<std::string, int> votes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto found = values[i].find(key);
      ++votes[found == values[i].end() ? "absent" : found->second];
    }
    if (votes.size() == 1) continue;
    // std::map iterates values in order, so the first maximum is the smallest value.
    std::string majority;
    int majority_votes = 0;
    for (const auto& [value, count] : votes) {
      if (count > majority_votes) {
        majority = value;
        majority_votes = count;
      }
    }
    const bool tie =
        std::count_if(votes.begin(), votes.end(), [&](const auto& v) { return v.second == majority_votes; }) > 1;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto found = values[i].find(key);
      const std::string value = found == values[i].end() ? "absent" : found->second;
      if (value == majority && !tie) continue;
      differences.push_back(
          {nodes[i].hostname, key, value, tie ? "no majority" : majority, tie ? 0 : majority_votes, total});
    }
  }
  return differences;
}

std::string describe(const NodeDifference& d) {
  if (d.majority_nodes == 0) return d.hostname + ": " + d.key + " is " + d.value + " (nodes disagree, no majority)";
  return fmt::format("{}: {} is {}, {} of {} nodes have {}", d.hostname, d.key, d.value, d.majority_nodes, d.nodes,
                     d.majority);
}

std::vector<std::string> node_findings(const NodeTopology& node) {
  std::vector<std::string> findings;
  for (const Gpu& gpu : node.gpus) {
    const std::string id = fmt::format("GPU {} ({})", gpu.index, gpu.bus_id);
    // An idle GPU lowers its PCIe generation to save power, so only a narrower width than
    // the GPU's maximum is a fault NVML can show without load.
    if (gpu.pcie_width_max > 0 && gpu.pcie_width_current > 0 && gpu.pcie_width_current < gpu.pcie_width_max) {
      findings.push_back(fmt::format("{}: PCIe link x{} of x{}", id, gpu.pcie_width_current, gpu.pcie_width_max));
    }
    double best = 0;
    for (const Gpu& peer : node.gpus) {
      if (peer.model == gpu.model) best = std::max(best, pcie_gbps(node, peer));
    }
    const double own = pcie_gbps(node, gpu);
    if (own > 0 && own < best) {
      findings.push_back(id + ": PCIe link " + format_gbps(own) + ", other " + gpu.model + " GPUs have " +
                         format_gbps(best));
    }
    int most_links = 0;
    for (const Gpu& peer : node.gpus) {
      if (peer.model == gpu.model) most_links = std::max(most_links, total_nvlinks(node, peer));
    }
    const int links = total_nvlinks(node, gpu);
    if (links < most_links) {
      findings.push_back(fmt::format("{}: {} NVLinks, other {} GPUs have {}", id, links, gpu.model, most_links));
    }
  }
  // Ports are only compared with ports of their own role and kind (link layer and device):
  // a 100 GbE storage or front-end port next to 400G compute ports is not degraded, even on
  // the compute NICs' own card. Only compute ports fail for being down: an unused port of a
  // storage NIC is normal.
  const NicRoles roles = nic_roles(node);
  std::vector<std::string> peers;  // the group each NIC's ports are compared within
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    const std::string& card = roles.compared_within_card[n];
    peers.push_back(fmt::format("{} {}{}", to_string(roles.role[n]), roles.kind[n], card.empty() ? "" : " card " + card));
  }
  std::map<std::string, double> fastest;  // per group, among active RDMA ports
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    for (const NicPort& port : node.nics[n].ports) {
      if (node.nics[n].rdma && port.active()) fastest[peers[n]] = std::max(fastest[peers[n]], port.rate_gbit);
    }
  }
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    const Nic& nic = node.nics[n];
    if (!nic.rdma || roles.role[n] == NicRole::virtual_interface) continue;
    for (const NicPort& port : nic.ports) {
      const std::string id = fmt::format("{} port {}", nic.name, port.port);
      if (!port.active()) {
        if (roles.role[n] != NicRole::compute) continue;
        findings.push_back(id + ": " + (port.state.empty() ? std::string("not active") : port.state) +
                           (port.physical_state.empty() ? "" : " (" + port.physical_state + ")"));
      } else if (port.rate_gbit > 0 && port.rate_gbit < fastest[peers[n]]) {
        std::string rate = rate_text(port.rate_gbit);
        if (port.lanes > 0 && !port.speed.empty()) rate += fmt::format(" ({}X {})", port.lanes, port.speed);
        findings.push_back(id + ": " + rate + ", other " + (port.link_layer.empty() ? "" : port.link_layer + " ") +
                           "ports run at " + rate_text(fastest[peers[n]]));
      }
    }
  }
  return findings;
}

}  // namespace commbench
