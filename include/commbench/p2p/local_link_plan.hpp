// What bench-p2p --local measures on one node, in what order, and how each measurement
// becomes cells of the report. Pure: the plan is built from what the node is (its GPUs,
// their NUMA nodes, which pairs reach each other directly) and the timing comes from
// LocalGpuLinks, so this file is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commbench/backend/local_gpu_links.hpp"
#include "commbench/p2p/pair_matrix.hpp"

namespace commbench {

// The node as the plan needs it, GPUs in CUDA's order.
struct LocalNode {
  std::string host;
  int rank = 0;                       // the rank that measures this node
  std::vector<std::string> bus_ids;   // one per GPU
  std::vector<int> gpu_numa;          // the NUMA node of each GPU, -1 unknown
  std::vector<int> numa_nodes;        // every NUMA node of the host, ascending
  std::vector<std::vector<PeerAccess>> access;  // [source][destination]
};

enum class LocalTransfer { gpu_to_gpu, host_to_gpu, gpu_to_host };

// Which host memory a host test uses: pinned on the GPU's own NUMA node, pinned on
// another node (the far socket), or pageable.
enum class HostMemoryRole { pinned_near, pinned_far, pageable };

struct LocalLinkTest {
  LocalTransfer transfer = LocalTransfer::gpu_to_gpu;
  GpuCopyMethod method = GpuCopyMethod::copy_engine;  // GPU-to-GPU tests
  HostMemoryRole role = HostMemoryRole::pinned_near;  // host tests
  HostMemory memory;                                  // host tests: what to allocate
  int source = 0;       // GPU index (the GPU of a host test is `gpu`)
  int destination = 0;  // GPU index
  int gpu = 0;          // host tests: the GPU
  bool both_ways = false;
};

struct LocalLinkPlan {
  std::vector<LocalLinkTest> tests;
  std::vector<std::string> notes;  // what is not measured and why (no far NUMA node, no peer access)
};

struct LocalPlanRequest {
  std::vector<GpuCopyMethod> methods{GpuCopyMethod::copy_engine, GpuCopyMethod::sm_kernel, GpuCopyMethod::nccl};
  bool host = true;        // the host-to-GPU tests
  bool both_ways = false;  // also each pair (and each GPU with the host) in both directions at once
};

// Every ordered GPU pair by every method one way (and each unordered pair both ways), then
// per GPU host-to-GPU and back from pinned memory near, pinned memory far (the first NUMA
// node after the GPU's own, when the host has another) and pageable memory. The SM kernel
// stores into the peer's memory, so a pair without peer access has no SM test (a note
// says so); copy engine and NCCL still run, staged through the host. Pageable memory is
// never both ways: the driver copies it with the calling thread, so the two directions
// would run one after the other.
LocalLinkPlan plan_local_links(const LocalNode& node, const LocalPlanRequest& request);

// "copy-engine", "sm-copy", "nccl"; "pinned-near", "pinned-far", "pageable": the method
// column of a cell (the host tests all run on the copy engine; what differs is the memory).
std::string method_text(const LocalLinkTest& test);

// The cells of one measured test: one (or two, both ways) per direction, bandwidth from the
// timing, devices named "GPU <bus id>" or "host NUMA <n> pinned" / "host pageable". The
// spec is left to the caller (the bandwidth model).
std::vector<PairCell> local_cells(const LocalNode& node, const LocalLinkTest& test, const CopyRequest& request,
                                  const CopyTiming& timing);

// The console's view of a node's cells: the GPU-to-GPU matrix of each method and direction
// mode, the latency matrix, then the host-to-GPU table, GPUs numbered in CUDA's order with
// their bus ids listed once.
std::string local_report_text(const LocalNode& node, const std::vector<PairCell>& cells);

// The peer-access matrix, [source][destination]: "NV" where the source reaches the
// destination's memory directly over NVLink, "P2P" directly over PCIe, "P2P?" directly
// over a link the topology cannot name, "host" where transfers are staged through host
// memory, "X" on the diagonal. `nvlink` [source][destination] is what the topology knows
// (nullopt: unknown).
using PeerAccessCodes = std::vector<std::vector<std::string>>;
PeerAccessCodes peer_access_codes(const LocalNode& node, const std::vector<std::vector<std::optional<bool>>>& nvlink);
std::string peer_access_text(const PeerAccessCodes& codes);

}  // namespace commbench
