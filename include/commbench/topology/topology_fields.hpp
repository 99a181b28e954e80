// The node model's fields, each named once: the JSON file (topology_json.cpp) and the
// exchange between ranks (backend/typed_exchange.hpp) both walk these lists, so neither can
// miss a field the other has.
#pragma once

#include <concepts>
#include <type_traits>

#include "commbench/topology/node_topology.hpp"
#include "commbench/topology/topology_matrix.hpp"

namespace commbench {

// `v(name, member)` is a stored field; `v.derived(name, value)` is written for readers of
// the file, ignored when reading and not sent between ranks.
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NumaNode>
void fields(Self& n, Visit& v) {
  v("os_index", n.os_index);
  v.derived("cpus", [&] { return format_cpu_list(n.cpus); });
  v("cpu_list", n.cpus);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, PciObject>
void fields(Self& p, Visit& v) {
  v("kind", p.kind);
  v("parent", p.parent);
  v("numa", p.numa);
  v("bus_id", p.bus_id);
  v("class", p.class_code);
  v("vendor", p.vendor);
  v("device", p.device_id);
  v("subtype", p.subtype);
  v("link_gbps", p.link_gbps);
  v("link_generation", p.link_generation);
  v("link_width", p.link_width);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, Gpu>
void fields(Self& g, Visit& v) {
  v("index", g.index);
  v("pci", g.pci);
  v("bus_id", g.bus_id);
  v("model", g.model);
  v("numa", g.numa);
  v("cpu_list", g.cpus);
  v("sm", g.sm);
  v("nvlink_generation", g.nvlink_generation);
  v("pcie_generation_current", g.pcie_generation_current);
  v("pcie_generation_max", g.pcie_generation_max);
  v("pcie_width_current", g.pcie_width_current);
  v("pcie_width_max", g.pcie_width_max);
  v("source", g.source);
  v("nvlinks_unrecorded", g.nvlinks_unrecorded);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NvlinkGroup>
void fields(Self& g, Visit& v) {
  v("gpu", g.gpu);
  v("remote_bus_id", g.remote_bus_id);
  v("peer", g.peer);
  v("links", g.links);
  v("gbps_per_link", g.gbps_per_link);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, P2pStatus>
void fields(Self& p, Visit& v) {
  v("gpu_a", p.gpu_a);
  v("gpu_b", p.gpu_b);
  v("read", p.read);
  v("write", p.write);
  v("atomics", p.atomics);
  v("nvlink", p.nvlink);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NicPort>
void fields(Self& p, Visit& v) {
  v("port", p.port);
  v("state_code", p.state_code);
  v("state", p.state);
  v("physical_state", p.physical_state);
  v("link_layer", p.link_layer);
  v("rate_gbit", p.rate_gbit);
  v("lanes", p.lanes);
  v("speed", p.speed);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, Nic>
void fields(Self& n, Visit& v) {
  v("name", n.name);
  v("pci", n.pci);
  v("bus_id", n.bus_id);
  v("numa", n.numa);
  v("cpu_list", n.cpus);
  v("netdevs", n.netdevs);
  v("ports", n.ports);
  v("source", n.source);
  v("rdma", n.rdma);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, CpuType>
void fields(Self& c, Visit& v) {
  v("architecture", c.architecture);
  v("vendor", c.vendor);
  v("family", c.family);
  v("model", c.model);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NodeTopology>
void fields(Self& node, Visit& v) {
  v("hostname", node.hostname);
  v("sources", node.sources);
  v("unknowns", node.unknowns);
  v("pci_detail", node.pci_detail);
  v("cpu_type", node.cpu_type);
  v("numa_nodes", node.numa_nodes);
  v("pci", node.pci);
  v("gpus", node.gpus);
  v("nvlinks", node.nvlinks);
  v("p2p", node.p2p);
  v("nics", node.nics);
  v.derived("matrix", [&] { return matrix_entries(node); });
}

}  // namespace commbench
