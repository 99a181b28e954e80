// The links of the GPUs one process sees, measured from that process (bench-p2p --local,
// what nvbandwidth measures): GPU to GPU by the copy engines, by an SM copy kernel and by
// NCCL send/recv; host to GPU and back from pinned memory on a chosen NUMA node or from
// pageable memory; each GPU's load latency to a peer's or the host's memory; and whether
// a pair can reach each other's memory at all. Every time comes from CUDA events.
//
// The header holds no CUDA type: the implementation lives with the NCCL backend
// (src/backend/nccl/local_gpu_links.cpp), the one target that sees CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace commbench {

// How a GPU-to-GPU transfer moves: the source GPU's copy engine (cudaMemcpyPeerAsync on
// its stream), a kernel on the source GPU whose threads store into the peer's memory, or
// an NCCL send on the source GPU with the receive on the destination.
enum class GpuCopyMethod { copy_engine, sm_kernel, nccl };

// Host memory of a host-to-GPU transfer: page-locked (cudaHostRegister) and bound to one
// NUMA node, or ordinary pageable memory the driver stages through its own pinned buffer.
struct HostMemory {
  bool pinned = true;
  int numa = -1;  // pinned only: the node the pages are bound to; -1 where the GPU's is unknown
};

struct PeerAccess {
  bool supported = false;       // cudaDeviceCanAccessPeer: loads and stores reach the peer directly
  bool native_atomics = false;  // cudaDevP2PAttrNativeAtomicSupported
  int performance_rank = -1;    // cudaDevP2PAttrPerformanceRank: lower is a faster link; -1 unknown
};

struct CopyTiming {
  double seconds = 0;             // mean time of one copy (of each direction, when both at once)
  std::uint64_t wrong_bytes = 0;  // bytes the destination held wrong after the checked copy
  std::string note;               // what the timing needs said ("pages on NUMA node 1, not 0")
};

struct CopyRequest {
  std::uint64_t bytes = 0;
  std::uint64_t warmup = 0;
  std::uint64_t iterations = 1;
  bool both_ways = false;  // the reverse transfer runs at the same time, on its own stream
  bool check = false;      // the destination is compared with the source after the warm-up
};

class LocalGpuLinks {
 public:
  virtual ~LocalGpuLinks() = default;

  virtual int device_count() const = 0;
  // "0000:1b:00.0" (lower case) of CUDA device `device` as this process numbers them.
  virtual std::string bus_id(int device) const = 0;
  virtual PeerAccess peer_access(int source, int destination) = 0;
  // Throws UsageError naming -b/--bytes when a device has less free memory than a send and a
  // receive buffer of `bytes` take: asked before any result file is begun.
  virtual void require_room_for_buffers(std::uint64_t bytes) const = 0;

  // From `source`'s memory to `destination`'s. Throws BackendError (with the CUDA or NCCL
  // error) when the transfer fails; the SM kernel needs peer access (peer_access first).
  virtual CopyTiming gpu_to_gpu(GpuCopyMethod method, int source, int destination, const CopyRequest& request) = 0;
  // Between host memory and `device`, by the device's copy engine: host to device when
  // `to_device`, else back (with both_ways: the other direction at once).
  virtual CopyTiming host_and_gpu(int device, bool to_device, const HostMemory& memory, const CopyRequest& request) = 0;
  // Mean time of one dependent 8-byte load by a single thread of `device` from memory on
  // `target` (another GPU, needs peer access) or, with nullopt, pinned host memory on NUMA
  // node `host_numa`: the link's round trip, not the launch.
  virtual double load_latency_seconds(int device, std::optional<int> target, int host_numa, std::uint64_t loads) = 0;
};

// The links of every CUDA device this process sees. Throws BackendError "no CUDA device"
// (with CUDA's reason) where there is none. Defined only in builds with the NCCL backend.
std::unique_ptr<LocalGpuLinks> open_local_gpu_links();

std::string_view name_of(GpuCopyMethod method);  // "copy-engine", "sm-copy", "nccl"
// The method `name` names as name_of spells it; nullopt for none.
std::optional<GpuCopyMethod> copy_method_named(std::string_view name);

}  // namespace commbench
