// Which GPUs a process drives. Pure logic, so it is tested without a GPU: the NCCL
// backend feeds it the local rank from MPI's shared-memory split, what every process on
// the node can see (PCI bus ids, gathered over MPI), and the launcher's environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace commbench {

struct DeviceSelectionInput {
  int local_rank = 0;        // among this node's processes (MPI shared-memory split)
  int gpus_per_process = 1;  // -g
  // For each process on this node, indexed by local rank: the PCI bus ids of the devices
  // it sees, in CUDA ordinal order (i.e. after its CUDA_VISIBLE_DEVICES).
  std::vector<std::vector<std::string>> node_visible;
  std::optional<std::string> cuda_visible_devices;  // this process's variable, when set
  std::optional<std::string> slurm_localid;         // validated only; see below
  std::string host;
};

struct DeviceSelection {
  std::vector<int> devices;  // CUDA device ordinals (within this process's visible set)
  std::string reason;        // how they were chosen, for the header
};

// Rules:
//  - this process sees no device: BackendError ("no CUDA device ...", exit 3);
//  - the processes of the node see pairwise disjoint GPU sets: the launcher bound GPUs
//    per task (Slurm --gpus-per-task, a wrapper setting CUDA_VISIBLE_DEVICES per rank);
//    each process uses its first g devices;
//  - they all see the same set: it is shared out by MPI local rank, devices
//    [local_rank * g, local_rank * g + g); too few GPUs is a UsageError (exit 2), since NCCL
//    refuses two ranks on one GPU;
//  - any other overlap is a UsageError naming the host.
// The index is MPI's local rank, never SLURM_LOCALID: mpirun inside an sbatch script
// passes the batch step's SLURM_LOCALID=0 to every rank. Garbage in CUDA_VISIBLE_DEVICES
// or SLURM_LOCALID is a UsageError naming the variable.
DeviceSelection select_devices(const DeviceSelectionInput& input);

// Accepts comma-separated ordinals ("0,1"), GPU-/MIG- UUIDs, or empty (no device). CUDA
// itself silently ignores everything after a bad entry; commbench refuses the variable
// instead (UsageError naming CUDA_VISIBLE_DEVICES), since a typo there quietly moves ranks.
void validate_cuda_visible_devices(const std::string& text);

}  // namespace commbench
