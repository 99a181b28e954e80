#include "commbench/topology/gpu_nics.hpp"

#include <algorithm>
#include <cmath>

#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

// PIX is nearer than PXB; anything farther is not "on the GPU's switch".
int nearness(PathClass kind) {
  if (kind == PathClass::pix) return 0;
  if (kind == PathClass::pxb) return 1;
  return -1;
}

// How NCCL ranks a path between a GPU and a NIC (ncclTopoGetLocal): its bandwidth first,
// the nearer path type second. The bandwidth is the narrowest PCIe link between them and
// the NIC's fastest active port, where known (0 where neither is).
struct PathRank {
  double gbps = 0;
  int nearness = -1;  // -1: not on the GPU's switch
};

PathRank path_rank(const NodeTopology& node, int gpu, int nic) {
  PathRank rank;
  rank.nearness = nearness(classify(node, {Endpoint::Kind::gpu, gpu}, {Endpoint::Kind::nic, nic}).kind);
  const int gpu_pci = node.gpus[static_cast<std::size_t>(gpu)].pci;
  const Nic& device = node.nics[static_cast<std::size_t>(nic)];
  double port = 0;
  for (const NicPort& candidate : device.ports)
    if (candidate.active()) port = std::max(port, candidate.bandwidth_gbps());
  const double path = gpu_pci >= 0 && device.pci >= 0 ? pci_path_bottleneck_gbps(node, gpu_pci, device.pci) : 0;
  rank.gbps = path > 0 && port > 0 ? std::min(path, port) : std::max(path, port);
  return rank;
}

bool same_gbps(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

// Of `candidates`, those ranked best by `rank_of` (highest bandwidth, then nearest type),
// in their order; only paths on the GPU's switch count. One rule for both questions NCCL
// asks: which NICs are a GPU's, and which GPUs share a NIC.
template <typename RankOf>
std::vector<int> best_ranked(const std::vector<int>& candidates, RankOf rank_of) {
  std::vector<int> best;
  PathRank top;
  for (const int candidate : candidates) {
    const PathRank rank = rank_of(candidate);
    if (rank.nearness < 0) continue;
    const bool better = best.empty() || (rank.gbps > top.gbps && !same_gbps(rank.gbps, top.gbps)) ||
                        (same_gbps(rank.gbps, top.gbps) && rank.nearness < top.nearness);
    if (better) {
      best.clear();
      top = rank;
    }
    if (same_gbps(rank.gbps, top.gbps) && rank.nearness == top.nearness) best.push_back(candidate);
  }
  return best;
}

// NCCL's mirrorBits: the low log2(power_of_two) bits of `value`, reversed. Spreads GPU
// 1 of 4 to NIC 2, so that neighbouring GPUs land on NICs far apart.
int mirror_bits(int value, int power_of_two) {
  int mirrored = 0;
  for (int bit = 1, mirror = power_of_two >> 1; bit < power_of_two; bit <<= 1, mirror >>= 1)
    if (value & bit) mirrored |= mirror;
  return mirrored;
}

bool is_power_of_two(int value) { return value > 0 && (value & (value - 1)) == 0; }

}  // namespace

std::vector<int> nearest_compute_nics(const NodeTopology& node, const NicRoles& roles, int gpu) {
  std::vector<int> compute;
  for (std::size_t n = 0; n < node.nics.size(); ++n)
    if (roles.role[n] == NicRole::compute) compute.push_back(static_cast<int>(n));
  return best_ranked(compute, [&](int nic) { return path_rank(node, gpu, nic); });
}

GpuNics nccl_nics_of_gpu(const NodeTopology& node, const NicRoles& roles, const std::vector<int>& job_gpus, int gpu) {
  GpuNics result;
  const std::vector<int> local = nearest_compute_nics(node, roles, gpu);
  if (local.empty()) return result;
  result.local_nics = static_cast<int>(local.size());

  // The job's GPUs nearest the first local NIC share the local NICs among them.
  const auto sharing = best_ranked(job_gpus, [&](int other) { return path_rank(node, other, local.front()); });
  result.sharing_gpus = std::max(1, static_cast<int>(sharing.size()));  // at least `gpu`, outside job_gpus

  const int per_gpu = (result.local_nics + result.sharing_gpus - 1) / result.sharing_gpus;
  int first = node.gpus[static_cast<std::size_t>(gpu)].index % result.sharing_gpus;
  if (is_power_of_two(result.local_nics)) first = mirror_bits(first, result.local_nics);
  for (int offset = 0; offset < per_gpu; ++offset)
    result.nics.push_back(local[static_cast<std::size_t>((first + offset) % result.local_nics)]);
  return result;
}

std::map<std::string, std::vector<int>> gpus_nearest_each_nic(const NodeTopology& node) {
  const NicRoles roles = nic_roles(node);
  std::map<std::string, std::vector<int>> gpus;
  for (std::size_t g = 0; g < node.gpus.size(); ++g)
    for (const int n : nearest_compute_nics(node, roles, static_cast<int>(g))) {
      const Nic& nic = node.nics[static_cast<std::size_t>(n)];
      gpus[nic.name].push_back(node.gpus[g].index);
      for (const std::string& netdev : nic.netdevs) gpus[netdev].push_back(node.gpus[g].index);
    }
  for (auto& [name, indexes] : gpus) std::sort(indexes.begin(), indexes.end());
  return gpus;
}

}  // namespace commbench
