#include "commbench/topology/nvlink_parts.hpp"

namespace commbench {
namespace {

constexpr unsigned kNvidia = 0x10de;

struct SxmPart {
  unsigned device_id;
  const char* name;
};

// The SXM parts of the PCI ID Repository (pci-ids.ucw.cz) found in the HGX/DGX systems
// commbench is run on. PCIe boards of the same chips (A100 PCIe 0x20b5, 0x20f1; H100
// PCIe 0x2331) are left out: their NVLink bridges are optional, so a PCIe path is real.
constexpr SxmPart kSxmParts[] = {
    {0x15f9, "P100-SXM2-16GB"}, {0x1db1, "V100-SXM2-16GB"}, {0x1db5, "V100-SXM2-32GB"}, {0x1db8, "V100-SXM3-32GB"},
    {0x20b0, "A100-SXM4-40GB"}, {0x20b2, "A100-SXM4-80GB"}, {0x2330, "H100-SXM5-80GB"},
};

}  // namespace

std::string sxm_part_name(unsigned vendor, unsigned device_id) {
  if (vendor != kNvidia) return "";
  for (const SxmPart& part : kSxmParts) {
    if (part.device_id == device_id) return part.name;
  }
  return "";
}

bool is_nvlink_part(unsigned vendor, unsigned device_id, const std::string& model) {
  return !sxm_part_name(vendor, device_id).empty() || model.find("SXM") != std::string::npos;
}

std::string unrecorded_nvlinks_line(const NodeTopology& node) {
  std::string gpus, parts;
  for (const Gpu& gpu : node.gpus) {
    if (!gpu.nvlinks_unrecorded) continue;
    if (!gpus.empty()) gpus += ',';
    gpus += std::to_string(gpu.index);
    std::string part = gpu.model;
    if (gpu.pci >= 0 && gpu.pci < static_cast<int>(node.pci.size())) {
      const PciObject& pci = node.pci[static_cast<std::size_t>(gpu.pci)];
      if (const std::string name = sxm_part_name(pci.vendor, pci.device_id); !name.empty()) part = name;
    }
    if (parts.find(part) != std::string::npos) continue;
    if (!parts.empty()) parts += ", ";
    parts += part;
  }
  if (gpus.empty()) return "";
  return "NVLinks of GPU " + gpus + " (" + parts +
         ", NVLink parts) unknown: hwloc records NVLink only through its NVML backend, and no NVLink "
         "matrix was read; their GPU pairs are shown ? and their bandwidth inside the node is not modelled";
}

}  // namespace commbench
