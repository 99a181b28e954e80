#include "commbench/topology/link_spec.hpp"

#include <array>
#include <utility>

#include "commbench/core/number_text.hpp"

namespace commbench {

std::optional<double> pcie_bandwidth_gbps(int generation, int lanes) {
  // GB/s per lane after encoding.
  static constexpr std::array<double, 7> kPerLane{0, 0.25, 0.5, 0.984375, 1.96875, 3.9375, 7.5625};
  if (generation < 1 || generation >= static_cast<int>(kPerLane.size())) return std::nullopt;
  switch (lanes) {
    case 1:
    case 2:
    case 4:
    case 8:
    case 12:
    case 16:
    case 32: break;
    default: return std::nullopt;
  }
  return kPerLane[static_cast<std::size_t>(generation)] * lanes;
}

std::optional<double> nvlink_link_bandwidth_gbps(int generation) {
  switch (generation) {
    case 1: return 20.0;
    case 2:
    case 3:
    case 4: return 25.0;
    case 5: return 50.0;
    default: return std::nullopt;
  }
}

std::optional<double> infiniband_lane_gbit(std::string_view speed) {
  static constexpr std::array<std::pair<std::string_view, double>, 9> kLanes{{{"SDR", 2.5},
                                                                              {"DDR", 5.0},
                                                                              {"QDR", 10.0},
                                                                              {"FDR10", 10.0},
                                                                              {"FDR", 14.0625},
                                                                              {"EDR", 25.0},
                                                                              {"HDR", 50.0},
                                                                              {"NDR", 100.0},
                                                                              {"XDR", 200.0}}};
  for (const auto& [name, gbit] : kLanes)
    if (name == speed) return gbit;
  return std::nullopt;
}

std::optional<double> infiniband_bandwidth_gbps(std::string_view speed, int lanes) {
  const auto lane = infiniband_lane_gbit(speed);
  if (!lane || lanes <= 0) return std::nullopt;
  return *lane * lanes / 8.0;
}

std::optional<int> pcie_generation_from_speed(std::string_view speed) {
  constexpr std::string_view kUnit = " GT/s";
  std::string_view number = speed;
  if (number.size() > 5 && number.substr(number.size() - 5) == " PCIe") number.remove_suffix(5);
  if (number.size() <= kUnit.size() || number.substr(number.size() - kUnit.size()) != kUnit) return std::nullopt;
  number.remove_suffix(kUnit.size());
  static constexpr std::pair<std::string_view, int> kGenerations[] = {{"2.5", 1},  {"5", 2},  {"5.0", 2},  {"8", 3},
                                                                      {"8.0", 3},  {"16", 4}, {"16.0", 4}, {"32", 5},
                                                                      {"32.0", 5}, {"64", 6}, {"64.0", 6}};
  for (const auto& [text, generation] : kGenerations)
    if (text == number) return generation;
  return std::nullopt;
}

bool known_pci_base_class(unsigned base_class) {
  // 0x00-0x13 are defined by the PCI Code and ID Assignment specification; 0x40 is
  // "co-processor" and 0xff "unassigned", both seen in the wild.
  return base_class <= 0x13 || base_class == 0x40 || base_class == 0xff;
}

std::string format_gbps(double gbps) { return significant_text(gbps, 4) + " GB/s"; }

}  // namespace commbench
