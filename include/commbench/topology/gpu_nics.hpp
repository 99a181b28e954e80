// Which NICs carry one GPU's traffic between nodes, as NCCL picks them for send/recv
// (ncclTopoGetLocalNetType in src/graph/topo.cc, NCCL_NETDEVS_POLICY=AUTO). A GPU uses
// the compute NICs nearest it; when several of the job's GPUs share those NICs, each GPU
// gets its share, not all of them: on an NDv4-like node (two GPUs and two HDR NICs per
// PCIe switch) a GPU of an 8-GPU job sends through one NIC, 25 GB/s, not both.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "commbench/topology/nic_roles.hpp"
#include "commbench/topology/node_topology.hpp"

namespace commbench {

struct GpuNics {
  std::vector<int> nics;  // indexes into node.nics; empty when no compute NIC is near the GPU
  int local_nics = 0;     // compute NICs nearest the GPU
  int sharing_gpus = 0;   // the job's GPUs nearest the first of them (NCCL's localGpuCount)
};

// The compute NICs nearest GPU `gpu` (index into node.gpus), as NCCL's ncclTopoGetLocal
// ranks paths: among those on its PCIe switch (PIX or PXB), the widest path (narrowest PCIe
// link and the NIC's port), and of equal width the nearer type; in node.nics order. Empty
// when none is on its switch (the model then uses the fastest compute port).
std::vector<int> nearest_compute_nics(const NodeTopology& node, const NicRoles& roles, int gpu);

// The NICs NCCL gives GPU `gpu` of a job on `job_gpus` (indexes into node.gpus): of the
// `local` nearest NICs, shared by the `sharing` job GPUs nearest the first one, each GPU
// takes ceil(local / sharing), starting at its device number modulo `sharing` (bit-mirrored
// when `local` is a power of two), as NCCL spreads GPUs over NICs.
GpuNics nccl_nics_of_gpu(const NodeTopology& node, const NicRoles& roles, const std::vector<int>& job_gpus, int gpu);

// For a NIC that falls short, the GPUs whose traffic it carries: each compute NIC, by its
// name and by each of its network interfaces, to the device numbers (Gpu::index, in order)
// of the GPUs it is nearest to (nearest_compute_nics). NICs near no GPU are left out.
std::map<std::string, std::vector<int>> gpus_nearest_each_nic(const NodeTopology& node);

}  // namespace commbench
