#include "commbench/topology/gpu_nics.hpp"

#include <algorithm>

#include "commbench/topology/pci_path.hpp"

namespace commbench {
namespace {

// PIX is nearer than PXB; anything farther is not "on the GPU's switch".
int nearness(PathClass kind) {
  if (kind == PathClass::pix) return 0;
  if (kind == PathClass::pxb) return 1;
  return -1;
}

int gpu_nic_nearness(const NodeTopology& node, int gpu, int nic) {
  return nearness(classify(node, {Endpoint::Kind::gpu, gpu}, {Endpoint::Kind::nic, nic}).kind);
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
  int best = -1;
  std::vector<int> nearest;
  for (std::size_t n = 0; n < node.nics.size(); ++n) {
    if (roles.role[n] != NicRole::compute) continue;
    const int rank = gpu_nic_nearness(node, gpu, static_cast<int>(n));
    if (rank < 0 || (best >= 0 && rank > best)) continue;
    if (rank < best || best < 0) nearest.clear();
    best = rank;
    nearest.push_back(static_cast<int>(n));
  }
  return nearest;
}

GpuNics nccl_nics_of_gpu(const NodeTopology& node, const NicRoles& roles, const std::vector<int>& job_gpus, int gpu) {
  GpuNics result;
  const std::vector<int> local = nearest_compute_nics(node, roles, gpu);
  if (local.empty()) return result;
  result.local_nics = static_cast<int>(local.size());

  // The job's GPUs nearest the first local NIC share the local NICs among them.
  int best = -1;
  for (const int other : job_gpus) {
    const int rank = gpu_nic_nearness(node, other, local.front());
    if (rank < 0) continue;
    if (best < 0 || rank < best) {
      best = rank;
      result.sharing_gpus = 0;
    }
    if (rank == best) ++result.sharing_gpus;
  }
  if (result.sharing_gpus == 0) result.sharing_gpus = 1;  // `gpu` itself, outside job_gpus

  const int per_gpu = (result.local_nics + result.sharing_gpus - 1) / result.sharing_gpus;
  int first = node.gpus[static_cast<std::size_t>(gpu)].index % result.sharing_gpus;
  if (is_power_of_two(result.local_nics)) first = mirror_bits(first, result.local_nics);
  for (int offset = 0; offset < per_gpu; ++offset)
    result.nics.push_back(local[static_cast<std::size_t>((first + offset) % result.local_nics)]);
  return result;
}

}  // namespace commbench
