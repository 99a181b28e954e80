#include "commbench/topology/topology_matrix.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

std::vector<Endpoint> matrix_endpoints(const NodeTopology& node) {
  std::vector<Endpoint> endpoints;
  for (std::size_t g = 0; g < node.gpus.size(); ++g) endpoints.push_back({Endpoint::Kind::gpu, static_cast<int>(g)});
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (node.nics[n].rdma) endpoints.push_back({Endpoint::Kind::nic, static_cast<int>(n)});
  }
  return endpoints;
}

std::string label(const NodeTopology& node, Endpoint e) {
  if (e.kind == Endpoint::Kind::gpu) return fmt::format("GPU{}", node.gpus[static_cast<std::size_t>(e.index)].index);
  int position = 0;  // NICs are numbered among RDMA NICs, like nvidia-smi does
  for (int n = 0; n < e.index; ++n) position += node.nics[static_cast<std::size_t>(n)].rdma ? 1 : 0;
  return fmt::format("NIC{}", position);
}

const std::vector<int>& cpus_of(const NodeTopology& node, Endpoint e) {
  return e.kind == Endpoint::Kind::gpu ? node.gpus[static_cast<std::size_t>(e.index)].cpus
                                       : node.nics[static_cast<std::size_t>(e.index)].cpus;
}

int numa_of(const NodeTopology& node, Endpoint e) {
  return e.kind == Endpoint::Kind::gpu ? node.gpus[static_cast<std::size_t>(e.index)].numa
                                       : node.nics[static_cast<std::size_t>(e.index)].numa;
}

// A left-aligned column of `width` characters followed by one space: the matrix and the
// NIC table line up like nvidia-smi's, and a long name still keeps a space after it.
TextColumn padded(std::string heading, std::size_t width) { return {{std::move(heading)}, Align::left, width - 1}; }

// The last column runs to the end of the line, without trailing spaces.
TextColumn trailing(std::string heading) { return {{std::move(heading)}, Align::left, 0}; }

std::string parent_bus_id(const NodeTopology& node, int pci) {
  if (pci < 0) return "";
  const int parent = node.pci[static_cast<std::size_t>(pci)].parent;
  if (parent < 0) return "host bridge";
  const PciObject& up = node.pci[static_cast<std::size_t>(parent)];
  return up.bus_id.empty() ? "host bridge" : up.bus_id;
}

}  // namespace

std::string format_cpu_list(const std::vector<int>& cpus) {
  if (cpus.empty()) return "N/A";
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  std::size_t i = 0;
  while (i < sorted.size()) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(sorted[i]);
    if (j > i) {
      text += '-';
      text += std::to_string(sorted[j]);
    }
    i = j + 1;
  }
  return text;
}

std::vector<std::vector<std::string>> matrix_entries(const NodeTopology& node) {
  const std::vector<Endpoint> endpoints = matrix_endpoints(node);
  std::vector<std::vector<std::string>> entries(endpoints.size(), std::vector<std::string>(endpoints.size()));
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    for (std::size_t j = 0; j < endpoints.size(); ++j)
      entries[i][j] = to_string(classify(node, endpoints[i], endpoints[j]));
  }
  return entries;
}

std::string render_matrix(const NodeTopology& node) {
  const std::vector<Endpoint> endpoints = matrix_endpoints(node);
  if (endpoints.empty()) return "No GPUs and no RDMA NICs found on " + node.hostname + ".\n";
  constexpr std::size_t cell = 7;
  std::vector<TextColumn> columns{padded("", cell)};
  for (const Endpoint e : endpoints) columns.push_back(padded(label(node, e), cell));
  columns.push_back(padded("CPU Affinity", 16));
  columns.push_back(trailing("NUMA Affinity"));
  TextTable table(std::move(columns));
  const std::vector<std::vector<std::string>> entries = matrix_entries(node);
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    std::vector<std::string> cells{label(node, endpoints[i])};
    cells.insert(cells.end(), entries[i].begin(), entries[i].end());
    const int numa = numa_of(node, endpoints[i]);
    cells.push_back(format_cpu_list(cpus_of(node, endpoints[i])));
    cells.push_back(numa >= 0 ? std::to_string(numa) : "N/A");
    table.add_row(std::move(cells));
  }
  std::string text = table.render() +
                     "\nLegend:\n\n"
                     "  X    = the device itself\n"
                     "  SYS  = path crosses PCIe and the interconnect between NUMA nodes (QPI/UPI/xGMI)\n"
                     "  NODE = path crosses PCIe and the link between host bridges of one NUMA node\n"
                     "  PHB  = path crosses PCIe and a PCIe host bridge (the CPU's root complex)\n"
                     "  PXB  = path crosses several PCIe bridges, but no host bridge\n"
                     "  PIX  = path crosses at most one PCIe switch\n"
                     "  NV#  = path over # NVLinks (direct, or the smaller GPU's links into NVSwitches)\n"
                     "  ?    = not known from the sources read\n";
  bool nic_header = false;
  for (const Endpoint e : endpoints) {
    if (e.kind != Endpoint::Kind::nic) continue;
    if (!nic_header) text += "\nNIC Legend:\n\n";
    nic_header = true;
    text += "  " + label(node, e) + ": " + node.nics[static_cast<std::size_t>(e.index)].name + "\n";
  }
  return text;
}

std::string render_nic_table(const NodeTopology& node) {
  if (node.nics.empty()) return "No NICs found on " + node.hostname + ".\n";
  TextTable table({padded("NIC", 10), padded("Port", 5), padded("State", 8), padded("Physical", 12), padded("Rate", 22),
                   padded("Link layer", 11), padded("Bus id", 14), padded("NUMA", 5), trailing("Net devices")});
  const auto known = [](const std::string& text) { return text.empty() ? std::string("?") : text; };
  for (const Nic& nic : node.nics) {
    std::string netdevs;
    for (const std::string& dev : nic.netdevs) netdevs += (netdevs.empty() ? "" : ",") + dev;
    const std::string numa = nic.numa >= 0 ? std::to_string(nic.numa) : "N/A";
    if (nic.ports.empty()) {
      table.add_row({nic.name, "-", "?", "?", "?", "?", known(nic.bus_id), numa, netdevs});
      continue;
    }
    for (const NicPort& port : nic.ports) {
      std::string rate = port.rate_gbit > 0 ? significant_text(port.rate_gbit) + " Gb/s" : std::string("?");
      if (port.lanes > 0 && !port.speed.empty()) rate += fmt::format(" ({}X {})", port.lanes, port.speed);
      table.add_row({nic.name, std::to_string(port.port), known(port.state), known(port.physical_state), rate,
                     known(port.link_layer), known(nic.bus_id), numa, netdevs});
    }
  }
  return table.render();
}

std::vector<LinkRow> link_rows(const NodeTopology& node) {
  std::vector<LinkRow> rows;
  for (const Gpu& gpu : node.gpus) {
    if (gpu.pci >= 0) {
      const PciObject& pci = node.pci[static_cast<std::size_t>(gpu.pci)];
      const int width = gpu.pcie_width_current > 0 ? gpu.pcie_width_current : pci.link_width;
      rows.push_back({node.hostname, fmt::format("GPU{}", gpu.index), parent_bus_id(node, gpu.pci), "PCIe", width,
                      pci.link_gbps, ""});
    }
  }
  for (const NvlinkGroup& group : node.nvlinks) {
    const char* peer = group.peer == NvlinkPeer::gpu        ? "GPU "
                       : group.peer == NvlinkPeer::nvswitch ? "NVSwitch "
                       : group.peer == NvlinkPeer::cpu      ? "CPU "
                                                            : "";
    rows.push_back({node.hostname, fmt::format("GPU{}", group.gpu), std::string(peer) + group.remote_bus_id, "NVLink",
                    group.links, group.links * group.gbps_per_link, ""});
  }
  for (const Nic& nic : node.nics) {
    if (nic.pci >= 0) {
      const PciObject& pci = node.pci[static_cast<std::size_t>(nic.pci)];
      rows.push_back(
          {node.hostname, nic.name, parent_bus_id(node, nic.pci), "PCIe", pci.link_width, pci.link_gbps, ""});
    }
    for (const NicPort& port : nic.ports) {
      rows.push_back({node.hostname, fmt::format("{} port {}", nic.name, port.port), "network",
                      port.link_layer.empty() ? "network" : port.link_layer, port.lanes, port.bandwidth_gbps(),
                      port.state});
    }
  }
  return rows;
}

Record link_record(const LinkRow& row) {
  Record record{&record_kind("link"), {}, {}};
  record.values = {row.host,
                   row.from,
                   row.to,
                   row.type,
                   row.count > 0 ? FieldValue{std::int64_t{row.count}} : FieldValue{},
                   row.spec_gbps > 0 ? FieldValue{row.spec_gbps} : FieldValue{},
                   row.state};
  return record;
}

}  // namespace commbench
