// The bandwidth of one NVLink link of a GPU, per direction. The generation alone does not
// say it: an sm_86 part (RTX 3090, RTX A6000, A40) carries NVLink 3 at 14.0625 GB/s per
// link where an A100 carries 25, so the compute capability decides first, then the model
// name, and the generation only where it is unambiguous. Anything else stays unknown.
#pragma once

#include <optional>
#include <string>

#include "commbench/topology/node_topology.hpp"

namespace commbench {

struct NvlinkRate {
  std::optional<double> spec_gbps;        // signalling rate after encoding, per direction
  std::optional<double> achievable_gbps;  // what NCCL's topology model assumes (SMxx_NVLINK_BW)
  std::string why_unknown;                // set when spec_gbps is empty
  // The most NVLink traffic one GPU moves, where NVIDIA has said the GPU itself stops short
  // of its links' figure (A100: about 230 GB/s of NCCL's 12 x 20 = 240); empty elsewhere.
  std::optional<double> gpu_ceiling_gbps;
};

NvlinkRate nvlink_rate(const Gpu& gpu);

// What `links` links of a GPU at `rate` reach: links x the per-link figure, at most the
// GPU's ceiling. `rate.achievable_gbps` must be set.
double nvlink_achievable_gbps(const NvlinkRate& rate, int links);

}  // namespace commbench
