// What an NCCL kernel's name says of the collective it runs, as a GPU trace shows it
// (torch.profiler's "kernel" events, Nsight Systems' CUDA kernels): NCCL 2.19 and later
// name a specialised kernel ncclDevKernel_<Coll>[_<RedOp>_<type>]_<ALGO>_<PROTO>
// ("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), older ones
// ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type> ("ncclKernel_AllReduce_RING_LL_Sum_float").
// A generic kernel (ncclDevKernel_Generic) picks its function at run time: its name holds no
// collective, algorithm or protocol.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace commbench {

struct NcclKernelName {
  std::string op;     // bench-replay's name: "allreduce", "allgather", ..., "sendrecv"; empty for a generic kernel
  std::string algo;   // "RING", "TREE", "NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT"; empty unknown
  std::string proto;  // "LL", "LL128", "SIMPLE"; empty unknown
};

// None for a name that is no NCCL kernel. The parameter list ("(ncclDevComm*, ...)") may
// follow the name.
std::optional<NcclKernelName> parse_nccl_kernel_name(std::string_view name);

}  // namespace commbench
