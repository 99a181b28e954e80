// Which GPUs a process drives. Pure logic, so it is tested without a GPU: the NCCL
// backend feeds it the local rank from MPI's shared-memory split, the launcher's
// environment, and the CUDA runtime's device count.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace commbench {

struct DeviceSelectionInput {
  int local_rank = 0;        // among this node's processes (MPI shared-memory split)
  int local_size = 1;        // processes on this node
  int gpus_per_process = 1;  // -g
  int visible_devices = 0;   // cudaGetDeviceCount(), i.e. after CUDA_VISIBLE_DEVICES
  std::optional<std::string> cuda_visible_devices;  // the variable's text, when set
  std::optional<std::string> slurm_localid;         // SLURM_LOCALID, when set
  std::string host;
};

struct DeviceSelection {
  std::vector<int> devices;  // CUDA device ordinals (within the visible set)
  std::string reason;        // how they were chosen, for the header
};

// Rules, in order:
//  - no visible device: BackendError ("no CUDA device ...", exit 3);
//  - exactly gpus_per_process visible: the launcher bound GPUs per task (Slurm
//    --gpus-per-task, or a wrapper setting CUDA_VISIBLE_DEVICES per rank): use them all;
//  - otherwise the node's GPUs are shared out by local index (SLURM_LOCALID when set, else
//    the MPI local rank): devices [index * g, index * g + g); too few GPUs for the
//    processes on the node is a UsageError (exit 2), since NCCL refuses two ranks on one GPU.
// Garbage in CUDA_VISIBLE_DEVICES or SLURM_LOCALID is a UsageError naming the variable.
DeviceSelection select_devices(const DeviceSelectionInput& input);

// Accepts what the CUDA runtime accepts: comma-separated ordinals ("0,1"), GPU-/MIG- UUIDs,
// or empty (no device). Throws UsageError naming CUDA_VISIBLE_DEVICES otherwise.
void validate_cuda_visible_devices(const std::string& text);

}  // namespace commbench
