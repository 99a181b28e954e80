#include "commbench/topology/nvlink_rate.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "commbench/topology/bandwidth_model.hpp"
#include "commbench/topology/link_spec.hpp"

namespace commbench {
namespace {

// GA102 (sm_86) exposes four NVLink 3 links of x4 lanes: 112.5 GB/s both directions
// together over four links, 14.0625 GB/s per link and direction (NVIDIA Ampere GA102 GPU
// architecture whitepaper; RTX 3090 and RTX A6000 product pages: 112.5 GB/s).
constexpr double kGa102LinkGbps = 14.0625;
// NCCL's figure for sm_86 NVLink (src/graph/topo.h, SM86_NVLINK_BW).
constexpr double kNcclSm86LinkGbps = 12.0;

// A100's NVLink traffic as NVIDIA's NCCL lead states it (NVIDIA/nccl-tests issue 149,
// 2023-07-05): 12 links at an effective 20 GB/s "should therefore be 240GB/s on A100, but
// some other bottlenecks on the GPUs limits it to ~230GB/s". One DGX A100 node measured
// 232.5 (NVIDIA/nccl issue 1048), docs/bandwidth-model.md.
constexpr double kGa100NvlinkCeilingGbps = 230.0;

// Per-link spec by compute capability; nullopt for architectures without NVLink.
std::optional<double> spec_for_sm(int sm) {
  switch (sm) {
    case 60: return 20.0;
    case 70:
    case 72:
    case 75:
    case 80:
    case 90: return 25.0;
    case 86: return kGa102LinkGbps;
    case 100:
    case 103: return 50.0;
    default: return std::nullopt;
  }
}

// NCCL's per-link model (src/graph/topo.h, ncclTopoNVLinkBw): by compute capability.
double nccl_figure_for_sm(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return kNcclSm86LinkGbps;
  if (sm >= 70) return 20.0;
  return 18.0;
}

// Model names of sm_86 boards that carry an NVLink bridge connector.
bool ga102_with_nvlink(const std::string& model) {
  static constexpr std::array<std::string_view, 6> kBoards{"RTX 3090",  "RTX A6000", "RTX A5500",
                                                           "RTX A5000", "RTX A4500", " A40"};
  for (const std::string_view board : kBoards)
    if (model.find(board) != std::string::npos) return true;
  return false;
}

// Data-centre parts whose NVLink 3 runs at 25 GB/s per link.
bool ga100(const std::string& model) {
  return model.find("A100") != std::string::npos || model.find("A800") != std::string::npos ||
         model.find("A30") != std::string::npos;
}

}  // namespace

NvlinkRate nvlink_rate(const Gpu& gpu) {
  if (gpu.sm > 0) {
    const std::optional<double> spec = spec_for_sm(gpu.sm);
    if (!spec) return {std::nullopt, std::nullopt, fmt::format("sm_{} has no known NVLink rate", gpu.sm), {}};
    // sm_80 is GA100 (A100, A800, A30): the ceiling binds only on A100's twelve links.
    const std::optional<double> ceiling = gpu.sm == 80 ? std::optional(kGa100NvlinkCeilingGbps) : std::nullopt;
    return {spec, nccl_figure_for_sm(gpu.sm), "", ceiling};
  }
  if (ga102_with_nvlink(gpu.model)) return {kGa102LinkGbps, kNcclSm86LinkGbps, "", {}};
  if (gpu.nvlink_generation == 3 && !ga100(gpu.model)) {
    return {std::nullopt, std::nullopt,
            "NVLink 3 runs at 25 GB/s per link on A100 but 14.06 on sm_86 parts, and the compute capability of " +
                (gpu.model.empty() ? std::string("this GPU") : gpu.model) + " is unknown",
            {}};
  }
  const std::optional<double> spec = nvlink_link_bandwidth_gbps(gpu.nvlink_generation);
  if (!spec)
    return {std::nullopt, std::nullopt, fmt::format("the NVLink generation of GPU {} is unknown", gpu.index), {}};
  const std::optional<double> ceiling =
      gpu.nvlink_generation == 3 && ga100(gpu.model) ? std::optional(kGa100NvlinkCeilingGbps) : std::nullopt;
  return {spec, nccl_model_nvlink_gbps(gpu.nvlink_generation), "", ceiling};
}

double nvlink_achievable_gbps(const NvlinkRate& rate, int links) {
  const double through_links = links * *rate.achievable_gbps;
  return rate.gpu_ceiling_gbps ? std::min(through_links, *rate.gpu_ceiling_gbps) : through_links;
}

}  // namespace commbench
