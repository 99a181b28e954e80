#include "commbench/topology/topology_matrix.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "commbench/report/csv_reporter.hpp"
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
  if (e.kind == Endpoint::Kind::gpu) return "GPU" + std::to_string(node.gpus[static_cast<std::size_t>(e.index)].index);
  int position = 0;  // NICs are numbered among RDMA NICs, like nvidia-smi does
  for (int n = 0; n < e.index; ++n) position += node.nics[static_cast<std::size_t>(n)].rdma ? 1 : 0;
  return "NIC" + std::to_string(position);
}

const std::vector<int>& cpus_of(const NodeTopology& node, Endpoint e) {
  return e.kind == Endpoint::Kind::gpu ? node.gpus[static_cast<std::size_t>(e.index)].cpus
                                       : node.nics[static_cast<std::size_t>(e.index)].cpus;
}

int numa_of(const NodeTopology& node, Endpoint e) {
  return e.kind == Endpoint::Kind::gpu ? node.gpus[static_cast<std::size_t>(e.index)].numa
                                       : node.nics[static_cast<std::size_t>(e.index)].numa;
}

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string number(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

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
    for (std::size_t j = 0; j < endpoints.size(); ++j) entries[i][j] = to_string(classify(node, endpoints[i], endpoints[j]));
  }
  return entries;
}

std::string render_matrix(const NodeTopology& node) {
  const std::vector<Endpoint> endpoints = matrix_endpoints(node);
  std::ostringstream out;
  if (endpoints.empty()) {
    out << "No GPUs and no RDMA NICs found on " << node.hostname << ".\n";
    return out.str();
  }
  const std::vector<std::vector<std::string>> entries = matrix_entries(node);
  constexpr std::size_t cell = 7;
  out << pad("", cell);
  for (const Endpoint e : endpoints) out << pad(label(node, e), cell);
  out << pad("CPU Affinity", 16) << "NUMA Affinity\n";
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    out << pad(label(node, endpoints[i]), cell);
    for (std::size_t j = 0; j < endpoints.size(); ++j) out << pad(entries[i][j], cell);
    const int numa = numa_of(node, endpoints[i]);
    out << pad(format_cpu_list(cpus_of(node, endpoints[i])), 16) << (numa >= 0 ? std::to_string(numa) : "N/A") << "\n";
  }
  out << "\nLegend:\n\n"
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
    if (!nic_header) out << "\nNIC Legend:\n\n";
    nic_header = true;
    out << "  " << label(node, e) << ": " << node.nics[static_cast<std::size_t>(e.index)].name << "\n";
  }
  return out.str();
}

std::string render_nic_table(const NodeTopology& node) {
  std::ostringstream out;
  if (node.nics.empty()) {
    out << "No NICs found on " << node.hostname << ".\n";
    return out.str();
  }
  out << pad("NIC", 10) << pad("Port", 5) << pad("State", 8) << pad("Physical", 12) << pad("Rate", 22)
      << pad("Link layer", 11) << pad("Bus id", 14) << pad("NUMA", 5) << "Net devices\n";
  for (const Nic& nic : node.nics) {
    std::string netdevs;
    for (const std::string& dev : nic.netdevs) netdevs += (netdevs.empty() ? "" : ",") + dev;
    const std::string numa = nic.numa >= 0 ? std::to_string(nic.numa) : "N/A";
    if (nic.ports.empty()) {
      out << pad(nic.name, 10) << pad("-", 5) << pad("?", 8) << pad("?", 12) << pad("?", 22) << pad("?", 11)
          << pad(nic.bus_id.empty() ? "?" : nic.bus_id, 14) << pad(numa, 5) << netdevs << "\n";
      continue;
    }
    for (const NicPort& port : nic.ports) {
      std::string rate = port.rate_gbit > 0 ? number(port.rate_gbit, "%g") + " Gb/s" : std::string("?");
      if (port.lanes > 0 && !port.speed.empty()) rate += " (" + std::to_string(port.lanes) + "X " + port.speed + ")";
      out << pad(nic.name, 10) << pad(std::to_string(port.port), 5) << pad(port.state.empty() ? "?" : port.state, 8)
          << pad(port.physical_state.empty() ? "?" : port.physical_state, 12) << pad(rate, 22)
          << pad(port.link_layer.empty() ? "?" : port.link_layer, 11) << pad(nic.bus_id.empty() ? "?" : nic.bus_id, 14)
          << pad(numa, 5) << netdevs << "\n";
    }
  }
  return out.str();
}

std::vector<LinkRow> link_rows(const NodeTopology& node) {
  std::vector<LinkRow> rows;
  for (const Gpu& gpu : node.gpus) {
    if (gpu.pci >= 0) {
      const PciObject& pci = node.pci[static_cast<std::size_t>(gpu.pci)];
      const int width = gpu.pcie_width_current > 0 ? gpu.pcie_width_current : pci.link_width;
      rows.push_back({node.hostname, "GPU" + std::to_string(gpu.index), parent_bus_id(node, gpu.pci), "PCIe", width,
                      pci.link_gbps, ""});
    }
  }
  for (const NvlinkGroup& group : node.nvlinks) {
    const char* peer = group.peer == NvlinkPeer::gpu        ? "GPU "
                       : group.peer == NvlinkPeer::nvswitch ? "NVSwitch "
                       : group.peer == NvlinkPeer::cpu      ? "CPU "
                                                            : "";
    rows.push_back({node.hostname, "GPU" + std::to_string(group.gpu), std::string(peer) + group.remote_bus_id, "NVLink",
                    group.links, group.links * group.gbps_per_link, ""});
  }
  for (const Nic& nic : node.nics) {
    if (nic.pci >= 0) {
      const PciObject& pci = node.pci[static_cast<std::size_t>(nic.pci)];
      rows.push_back({node.hostname, nic.name, parent_bus_id(node, nic.pci), "PCIe", pci.link_width, pci.link_gbps, ""});
    }
    for (const NicPort& port : nic.ports) {
      rows.push_back({node.hostname, nic.name + " port " + std::to_string(port.port), "network",
                      port.link_layer.empty() ? "network" : port.link_layer, port.lanes, port.bandwidth_gbps(), port.state});
    }
  }
  return rows;
}

std::string links_csv_header() { return "host,from,to,type,count,spec_gbps,state"; }

std::string to_csv_line(const LinkRow& row) {
  return csv_escape(row.host) + "," + csv_escape(row.from) + "," + csv_escape(row.to) + "," + csv_escape(row.type) + "," +
         (row.count > 0 ? std::to_string(row.count) : "") + "," + (row.spec_gbps > 0 ? number(row.spec_gbps, "%.6g") : "") +
         "," + csv_escape(row.state);
}

}  // namespace commbench
