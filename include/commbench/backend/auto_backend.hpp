// What `--backend auto` takes, decided from what every rank sees, so it never picks a
// backend that cannot run the layout it was given: NCCL cannot put two ranks on one GPU,
// so four local ranks on a one-GPU workstation run the MPI host backend, with a note
// that says how to measure the GPU instead. Pure logic, tested without a GPU.
#pragma once

#include <string>
#include <vector>

namespace commbench {

struct RankDevices {
  std::string host;
  std::vector<std::string> bus_ids;  // the CUDA devices this rank sees
};

struct AutoBackendChoice {
  bool nccl = false;
  std::string note;  // why a machine with GPUs runs the host backend; empty otherwise
};

// `ranks` is indexed by rank. NCCL when every rank sees a device and, on every host, the
// ranks either see the same GPUs and there are at least (ranks x gpus_per_process) of them,
// or see pairwise disjoint sets of at least gpus_per_process each: what device selection
// (device_selection.hpp) accepts.
AutoBackendChoice choose_auto_backend(const std::vector<RankDevices>& ranks, int gpus_per_process);

}  // namespace commbench
