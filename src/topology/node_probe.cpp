#include "commbench/topology/node_probe.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/topology/hwloc_probe.hpp"
#include "commbench/topology/ibverbs_probe.hpp"
#include "commbench/topology/nccl_topo_xml.hpp"
#include "commbench/topology/nvlink_parts.hpp"
#include "commbench/topology/nvml_probe.hpp"
#include "commbench/topology/sysfs_nics.hpp"
#include "commbench/topology/sysfs_pcie.hpp"

namespace commbench {
namespace {

std::vector<int> cpus_of_numa(const NodeTopology& node, int numa) {
  for (const NumaNode& n : node.numa_nodes) {
    if (n.os_index == numa) return n.cpus;
  }
  return {};
}

int pci_index_of(const NodeTopology& node, const std::string& bus_id) {
  if (bus_id.empty()) return -1;
  for (std::size_t i = 0; i < node.pci.size(); ++i) {
    if (node.pci[i].bus_id == bus_id) return static_cast<int>(i);
  }
  return -1;
}

// GPUs from the CUDA runtime: model and compute capability for GPUs the PCI tree knows,
// and GPUs it does not know (no hwloc) added on their own.
void merge_cuda_gpus(NodeTopology& node, const std::vector<CudaGpu>& cuda) {
  for (const CudaGpu& device : cuda) {
    auto found =
        std::find_if(node.gpus.begin(), node.gpus.end(), [&](const Gpu& g) { return g.bus_id == device.bus_id; });
    if (found == node.gpus.end()) {
      Gpu gpu;
      gpu.bus_id = device.bus_id;
      gpu.pci = pci_index_of(node, device.bus_id);
      gpu.source = "cuda";
      node.gpus.push_back(gpu);
      found = node.gpus.end() - 1;
    }
    if (!device.model.empty()) found->model = device.model;
    if (device.sm > 0) found->sm = device.sm;
  }
  std::sort(node.gpus.begin(), node.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.bus_id < b.bus_id; });
  for (std::size_t i = 0; i < node.gpus.size(); ++i) node.gpus[i].index = static_cast<int>(i);
}

// A NIC of --sysfs-root at the bus id of one of the node's GPUs: the sysfs tree and the
// export (hwloc, NCCL) are of two machines, and every NIC would be typed and placed wrongly.
void refuse_nics_at_gpus(const NodeTopology& node, const std::vector<Nic>& nics, const std::string& sysfs_root) {
  for (const Nic& nic : nics)
    for (const Gpu& gpu : node.gpus)
      if (!nic.bus_id.empty() && nic.bus_id == gpu.bus_id)
        throw UsageError(
            fmt::format("--sysfs-root {}: {} sits at {}, where the node's GPU {} is: the sysfs tree and "
                        "the export are of different machines",
                        sysfs_root, nic.name, nic.bus_id, gpu.index));
}

}  // namespace

void attach_to_pci_tree(NodeTopology& node) {
  auto locate = [&](int& pci, const std::string& bus_id, int& numa, std::vector<int>& cpus) {
    if (pci < 0) pci = pci_index_of(node, bus_id);
    if (numa < 0 && pci >= 0) {
      // The tree hangs off its host bridge's locality.
      int root = pci;
      while (node.pci[static_cast<std::size_t>(root)].parent >= 0)
        root = node.pci[static_cast<std::size_t>(root)].parent;
      numa = node.pci[static_cast<std::size_t>(root)].numa;
    }
    if (cpus.empty() && numa >= 0) cpus = cpus_of_numa(node, numa);
  };
  for (Nic& nic : node.nics) locate(nic.pci, nic.bus_id, nic.numa, nic.cpus);
  for (Gpu& gpu : node.gpus) locate(gpu.pci, gpu.bus_id, gpu.numa, gpu.cpus);
}

NodeTopology probe_node(const ProbeOptions& options) {
  if (!options.hwloc_xml.empty() && !options.nccl_topo_xml.empty()) {
    throw UsageError("--hwloc-xml and --nccl-topo-xml both describe the node's PCI tree: give one of them");
  }
  NodeTopology node =
      options.nccl_topo_xml.empty() ? probe_hwloc(options.hwloc_xml) : load_nccl_topo_xml(options.nccl_topo_xml);

  if (!options.offline()) {
    if (options.cuda_gpus) {
      std::string why_none;
      const std::vector<CudaGpu> cuda = options.cuda_gpus(why_none);
      if (cuda.empty()) {
        node.unknowns.push_back("CUDA runtime lists no GPU: " + why_none);
      } else {
        merge_cuda_gpus(node, cuda);
        node.sources.push_back("CUDA runtime");
      }
    } else {
      node.unknowns.push_back(
          "GPUs from the CUDA runtime unknown: this build has no NCCL backend, which holds the CUDA runtime");
    }
    const std::size_t sources_before = node.sources.size();
    probe_nvml(node);  // names itself in `sources` when it loads
    // NVML answered: it reads every GPU's NVLinks, so none is unrecorded any more.
    if (node.sources.size() > sources_before)
      for (Gpu& gpu : node.gpus) gpu.nvlinks_unrecorded = false;
  } else {
    node.unknowns.push_back(
        "NVLink state, P2P status and current PCIe link of GPUs unknown: offline input (NVML reads only live GPUs)");
  }

  if (!options.sysfs_root.empty()) {
    std::vector<Nic> sysfs_nics = read_sysfs_nics(options.sysfs_root);
    refuse_nics_at_gpus(node, sysfs_nics, options.sysfs_root);
    merge_nics(node, std::move(sysfs_nics));
    node.sources.push_back("sysfs " + options.sysfs_root);
  } else if (!options.offline()) {
    if (!probe_ibverbs(node)) {
      merge_nics(node, read_sysfs_nics("/sys"));
      node.sources.push_back("sysfs /sys");
    } else {
      node.sources.push_back("libibverbs");
      // libibverbs knows ports, not where the device sits; sysfs adds bus ids and netdevs.
      merge_nics(node, read_sysfs_nics("/sys"));
    }
  } else if (options.nccl_topo_xml.empty()) {
    // hwloc exports carry each port's state but never its rate.
    const bool states =
        std::any_of(node.nics.begin(), node.nics.end(), [](const Nic& nic) { return !nic.ports.empty(); });
    node.unknowns.push_back(states ? "NIC port rates and physical states unknown: the hwloc export records port "
                                     "states only; give --sysfs-root for the rest"
                                   : "NIC port state and rate unknown: offline input without --sysfs-root");
  }
  attach_to_pci_tree(node);
  // GPU links: NVML first (live), then sysfs (live /sys, or the offline tree when given).
  if (!options.sysfs_root.empty()) {
    read_sysfs_pcie_links(node, options.sysfs_root);
  } else if (!options.offline()) {
    read_sysfs_pcie_links(node, "/sys");
  }
  use_idle_proof_gpu_links(node);
  if (node.hostname.empty()) {
    // An offline dump carries no host name: the file names the node.
    const std::string& file = options.nccl_topo_xml.empty() ? options.hwloc_xml : options.nccl_topo_xml;
    const std::size_t slash = file.find_last_of('/');
    node.hostname = slash == std::string::npos ? file : file.substr(slash + 1);
  }
  bool any_rdma = false;
  for (const Nic& nic : node.nics) any_rdma = any_rdma || nic.rdma;
  if (node.gpus.empty()) node.unknowns.push_back("no NVIDIA GPU found");
  if (const std::string line = unrecorded_nvlinks_line(node); !line.empty()) node.unknowns.push_back(line);
  if (!any_rdma) node.unknowns.push_back("no RDMA NIC found");
  return node;
}

}  // namespace commbench
