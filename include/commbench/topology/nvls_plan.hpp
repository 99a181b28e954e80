// How NCCL plans NVLink SHARP (NVLS) allreduce and what its tuner makes of the plan
// (src/graph/search.cc and src/graph/tuning.cc at master 5067397c; 2.28.9 has the same
// rules, and Blackwell's speed table there lacks the 45, which only nodes of 14 or 15
// B200s would land on). Releases up to 2.27 had another NVLS formula. The channel search gives
// every GPU of the node one channel and tries the speeds of a fixed table, fastest first;
// a channel's head GPU carries it twice, so k channels need (k+1) x speed of each GPU's
// NVSwitch bandwidth. The tuner then counts per channel speed x nvlsEfficiency x
// 2(k-1)/k, no more than the graph's second speed (on one node the table speed reached
// by climbing from the channel speed while below twice it), and for NVLS-tree no more
// than a per-channel cap per generation and node count (perChMaxNVLSTreeBws). So NCCL
// plans 476 GB/s for 8 x H100 (8 x 40 x 0.85 x 7/4), not 370.8 x 14/9 x 0.85 = 490.3,
// and only 240 for 4 GPUs of such a node, where its ring plans more.
#pragma once

#include <optional>

namespace commbench {

struct NvlsPlan {
  int channels = 0;                // one per GPU
  double channel_gbps = 0;         // the table speed every channel runs at (the graph's bwIntra)
  double second_speed_gbps = 0;    // the graph's bwInter on one node
  double reduced_per_channel = 0;  // channel speed x efficiency x 2(k-1)/k: the tuner's intraBw
  // What the tuner counts on one node: per channel the smaller of intraBw and bwInter.
  double one_node_busbw() const;
};

// nullopt when not even the slowest table speed fits (k+1) times into a GPU's NVSwitch
// bandwidth, or with fewer than 2 GPUs (NCCL needs 2 NVLS channels).
std::optional<NvlsPlan> nccl_nvls_plan(double gpu_nvswitch_gbps, int gpus, bool blackwell, double efficiency);

// The tuner's cap on an NVLS-tree channel (perChMaxNVLSTreeBws): Hopper 57.7 on 2 nodes
// and 45.5 beyond, Blackwell 96 and 80.
double nccl_nvls_tree_channel_cap(int nodes, bool blackwell);

}  // namespace commbench
