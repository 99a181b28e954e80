// Spec bandwidth of the links a collective crosses, per direction, in GB/s (1e9 bytes/s).
// These are the hardware's signalling rates after line encoding: what a link can never
// exceed. Achievable figures (NCCL's own model is lower on purpose) are a separate layer
// of the bandwidth model; docs/bandwidth-model.md names the sources.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace commbench {

// PCIe after encoding (8b/10b for Gen1-2, 128b/130b for Gen3-5, FLIT for Gen6):
// x16 gives Gen3 15.75, Gen4 31.5, Gen5 63, Gen6 121 GB/s. nullopt for unknown
// generations or lane counts other than 1, 2, 4, 8, 12, 16, 32.
std::optional<double> pcie_bandwidth_gbps(int generation, int lanes);

// PCIe generation from the link speed Linux (and NCCL's dump) prints: "2.5 GT/s PCIe" ...
// "64.0 GT/s PCIe", or "8 GT/s" from kernels up to 5.6; nullopt for anything else.
std::optional<int> pcie_generation_from_speed(std::string_view speed);

// Whether a PCI base class (class code >> 8) is one the PCI specification defines.
bool known_pci_base_class(unsigned base_class);

// One NVLink link of a generation: 20 (NVLink 1), 25 (2, 3, 4), 50 (5) GB/s.
std::optional<double> nvlink_link_bandwidth_gbps(int generation);

// InfiniBand lane rates in Gb/s by speed name (SDR 2.5 ... NDR 100, XDR 200).
std::optional<double> infiniband_lane_gbit(std::string_view speed);
// lanes x lane rate / 8: 4X EDR 12.5, 4X HDR 25, 4X NDR 50, 4X XDR 100 GB/s.
std::optional<double> infiniband_bandwidth_gbps(std::string_view speed, int lanes);

// "63.02 GB/s": four significant digits, the precision every report of a link uses.
std::string format_gbps(double gbps);

}  // namespace commbench
