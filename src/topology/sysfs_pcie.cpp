#include "commbench/topology/sysfs_pcie.hpp"

#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/topology/link_spec.hpp"
#include "commbench/topology/sysfs_file.hpp"

namespace commbench {
namespace {

int width_from(const std::filesystem::path& file) {
  const auto text = read_sysfs_attribute(file);
  if (!text) return 0;
  const auto width = parse_non_negative_int(text->c_str());
  if (!width || *width > 32) throw UsageError(file.string() + ": '" + excerpt(*text) + "' is not a PCIe link width");
  return *width;
}

}  // namespace

void read_sysfs_pcie_links(NodeTopology& node, const std::string& sysfs_root) {
  for (Gpu& gpu : node.gpus) {
    if (gpu.bus_id.empty() || (gpu.pcie_generation_max > 0 && gpu.pcie_width_current > 0)) continue;
    const std::filesystem::path device = std::filesystem::path(sysfs_root) / "bus" / "pci" / "devices" / gpu.bus_id;
    if (const auto speed = read_sysfs_attribute(device / "max_link_speed")) {
      const auto generation = pcie_generation_from_speed(*speed);
      // "Unknown" is what the kernel prints for a device without a PCIe capability.
      if (!generation && *speed != "Unknown") {
        throw UsageError((device / "max_link_speed").string() + ": '" + excerpt(*speed) +
                         "' is not a PCIe link speed (expected e.g. '32.0 GT/s PCIe')");
      }
      gpu.pcie_generation_max = generation.value_or(0);
    }
    gpu.pcie_width_current = width_from(device / "current_link_width");
    gpu.pcie_width_max = width_from(device / "max_link_width");
  }
}

void use_idle_proof_gpu_links(NodeTopology& node) {
  for (const Gpu& gpu : node.gpus) {
    if (gpu.pci < 0 || gpu.pcie_generation_max <= 0 || gpu.pcie_width_current <= 0) continue;
    const auto gbps = pcie_bandwidth_gbps(gpu.pcie_generation_max, gpu.pcie_width_current);
    if (!gbps) continue;
    PciObject& pci = node.pci[static_cast<std::size_t>(gpu.pci)];
    pci.link_gbps = *gbps;
    pci.link_generation = gpu.pcie_generation_max;
    pci.link_width = gpu.pcie_width_current;
  }
}

}  // namespace commbench
