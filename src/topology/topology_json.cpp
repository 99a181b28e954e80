#include "commbench/topology/topology_json.hpp"

#include <nlohmann/json.hpp>

#include "commbench/core/error.hpp"
#include "commbench/topology/pci_path.hpp"
#include "commbench/topology/topology_matrix.hpp"

namespace commbench {
namespace {

using nlohmann::json;

const char* kind_name(PciKind kind) {
  switch (kind) {
    case PciKind::host_bridge: return "host_bridge";
    case PciKind::bridge: return "bridge";
    case PciKind::device: return "device";
  }
  return "device";
}

PciKind parse_kind(const std::string& text) {
  if (text == "host_bridge") return PciKind::host_bridge;
  if (text == "bridge") return PciKind::bridge;
  return PciKind::device;
}

const char* peer_name(NvlinkPeer peer) {
  switch (peer) {
    case NvlinkPeer::gpu: return "gpu";
    case NvlinkPeer::nvswitch: return "nvswitch";
    case NvlinkPeer::cpu: return "cpu";
    case NvlinkPeer::unknown: break;
  }
  return "unknown";
}

NvlinkPeer parse_peer(const std::string& text) {
  if (text == "gpu") return NvlinkPeer::gpu;
  if (text == "nvswitch") return NvlinkPeer::nvswitch;
  if (text == "cpu") return NvlinkPeer::cpu;
  return NvlinkPeer::unknown;
}

const char* capability_name(Capability c) {
  return c == Capability::yes ? "yes" : c == Capability::no ? "no" : "unknown";
}

Capability parse_capability(const std::string& text) {
  return text == "yes" ? Capability::yes : text == "no" ? Capability::no : Capability::unknown;
}

}  // namespace

std::string topology_to_json_text(const NodeTopology& node) {
  json out;
  out["hostname"] = node.hostname;
  out["sources"] = node.sources;
  out["unknowns"] = node.unknowns;
  out["numa_nodes"] = json::array();
  for (const NumaNode& numa : node.numa_nodes) {
    out["numa_nodes"].push_back({{"os_index", numa.os_index}, {"cpus", format_cpu_list(numa.cpus)}, {"cpu_list", numa.cpus}});
  }
  out["pci"] = json::array();
  for (const PciObject& pci : node.pci) {
    out["pci"].push_back({{"kind", kind_name(pci.kind)}, {"parent", pci.parent}, {"numa", pci.numa},
                          {"bus_id", pci.bus_id}, {"class", pci.class_code}, {"vendor", pci.vendor},
                          {"device", pci.device_id}, {"subtype", pci.subtype}, {"link_gbps", pci.link_gbps},
                          {"link_generation", pci.link_generation}, {"link_width", pci.link_width}});
  }
  out["gpus"] = json::array();
  for (const Gpu& gpu : node.gpus) {
    out["gpus"].push_back({{"index", gpu.index}, {"pci", gpu.pci}, {"bus_id", gpu.bus_id}, {"model", gpu.model},
                           {"numa", gpu.numa}, {"cpu_list", gpu.cpus}, {"sm", gpu.sm},
                           {"nvlink_generation", gpu.nvlink_generation},
                           {"pcie_generation_current", gpu.pcie_generation_current},
                           {"pcie_generation_max", gpu.pcie_generation_max},
                           {"pcie_width_current", gpu.pcie_width_current}, {"pcie_width_max", gpu.pcie_width_max},
                           {"source", gpu.source}});
  }
  out["nvlinks"] = json::array();
  for (const NvlinkGroup& g : node.nvlinks) {
    out["nvlinks"].push_back({{"gpu", g.gpu}, {"remote_bus_id", g.remote_bus_id}, {"peer", peer_name(g.peer)},
                              {"links", g.links}, {"gbps_per_link", g.gbps_per_link}});
  }
  out["p2p"] = json::array();
  for (const P2pStatus& p : node.p2p) {
    out["p2p"].push_back({{"gpu_a", p.gpu_a}, {"gpu_b", p.gpu_b}, {"read", capability_name(p.read)},
                          {"write", capability_name(p.write)}, {"atomics", capability_name(p.atomics)},
                          {"nvlink", capability_name(p.nvlink)}});
  }
  out["nics"] = json::array();
  for (const Nic& nic : node.nics) {
    json ports = json::array();
    for (const NicPort& port : nic.ports) {
      ports.push_back({{"port", port.port}, {"state_code", port.state_code}, {"state", port.state},
                       {"physical_state", port.physical_state}, {"link_layer", port.link_layer},
                       {"rate_gbit", port.rate_gbit}, {"lanes", port.lanes}, {"speed", port.speed}});
    }
    out["nics"].push_back({{"name", nic.name}, {"pci", nic.pci}, {"bus_id", nic.bus_id}, {"numa", nic.numa},
                           {"cpu_list", nic.cpus}, {"netdevs", nic.netdevs}, {"ports", ports},
                           {"source", nic.source}, {"rdma", nic.rdma}});
  }
  out["matrix"] = matrix_entries(node);
  // Names come from files and hosts the user controls; bytes that are not UTF-8 become
  // U+FFFD instead of making the document unwritable.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

NodeTopology topology_from_json_text(const std::string& text, const std::string& where) {
  try {
    const json in = json::parse(text);
    NodeTopology node;
    node.hostname = in.at("hostname").get<std::string>();
    node.sources = in.at("sources").get<std::vector<std::string>>();
    node.unknowns = in.at("unknowns").get<std::vector<std::string>>();
    for (const json& n : in.at("numa_nodes")) node.numa_nodes.push_back({n.at("os_index"), n.at("cpu_list")});
    for (const json& p : in.at("pci")) {
      PciObject pci;
      pci.kind = parse_kind(p.at("kind"));
      pci.parent = p.at("parent");
      pci.numa = p.at("numa");
      pci.bus_id = p.at("bus_id");
      pci.class_code = p.at("class");
      pci.vendor = p.at("vendor");
      pci.device_id = p.at("device");
      pci.subtype = p.at("subtype");
      pci.link_gbps = p.at("link_gbps");
      pci.link_generation = p.at("link_generation");
      pci.link_width = p.at("link_width");
      if (pci.parent < -1 || pci.parent >= static_cast<int>(node.pci.size())) {
        throw UsageError(where + ": PCI object " + std::to_string(node.pci.size()) + " has a parent that does not precede it");
      }
      node.pci.push_back(pci);
    }
    auto check_pci = [&](int pci) {
      if (pci < -1 || pci >= static_cast<int>(node.pci.size())) throw UsageError(where + ": PCI index out of range");
      return pci;
    };
    for (const json& g : in.at("gpus")) {
      Gpu gpu;
      gpu.index = g.at("index");
      gpu.pci = check_pci(g.at("pci"));
      gpu.bus_id = g.at("bus_id");
      gpu.model = g.at("model");
      gpu.numa = g.at("numa");
      gpu.cpus = g.at("cpu_list").get<std::vector<int>>();
      gpu.sm = g.at("sm");
      gpu.nvlink_generation = g.at("nvlink_generation");
      gpu.pcie_generation_current = g.at("pcie_generation_current");
      gpu.pcie_generation_max = g.at("pcie_generation_max");
      gpu.pcie_width_current = g.at("pcie_width_current");
      gpu.pcie_width_max = g.at("pcie_width_max");
      gpu.source = g.at("source");
      node.gpus.push_back(gpu);
    }
    for (const json& g : in.at("nvlinks")) {
      node.nvlinks.push_back({g.at("gpu"), g.at("remote_bus_id"), parse_peer(g.at("peer")), g.at("links"), g.at("gbps_per_link")});
    }
    for (const json& p : in.at("p2p")) {
      node.p2p.push_back({p.at("gpu_a"), p.at("gpu_b"), parse_capability(p.at("read")), parse_capability(p.at("write")),
                          parse_capability(p.at("atomics")), parse_capability(p.at("nvlink"))});
    }
    for (const json& n : in.at("nics")) {
      Nic nic;
      nic.name = n.at("name");
      nic.pci = check_pci(n.at("pci"));
      nic.bus_id = n.at("bus_id");
      nic.numa = n.at("numa");
      nic.cpus = n.at("cpu_list").get<std::vector<int>>();
      nic.netdevs = n.at("netdevs").get<std::vector<std::string>>();
      nic.source = n.at("source");
      nic.rdma = n.at("rdma");
      for (const json& p : n.at("ports")) {
        NicPort port;
        port.port = p.at("port");
        port.state_code = p.at("state_code");
        port.state = p.at("state");
        port.physical_state = p.at("physical_state");
        port.link_layer = p.at("link_layer");
        port.rate_gbit = p.at("rate_gbit");
        port.lanes = p.at("lanes");
        port.speed = p.at("speed");
        nic.ports.push_back(port);
      }
      node.nics.push_back(nic);
    }
    return node;
  } catch (const json::exception& e) {
    throw UsageError(where + ": not a commbench topology model (" + e.what() + ")");
  }
}

}  // namespace commbench
