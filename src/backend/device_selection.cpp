#include "commbench/backend/device_selection.hpp"

#include <cctype>

#include "commbench/core/error.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

bool is_ordinal(const std::string& token) {
  if (token.empty() || token.size() > 6) return false;
  for (char c : token)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_uuid(const std::string& token) {
  const bool gpu = token.rfind("GPU-", 0) == 0;
  const bool mig = token.rfind("MIG-", 0) == 0;
  if (!gpu && !mig) return false;
  std::string rest = token.substr(4);
  if (mig && rest.rfind("GPU-", 0) == 0) rest = rest.substr(4);  // legacy MIG-GPU-<uuid>/gi/ci
  if (rest.empty()) return false;
  for (char c : rest)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-' && c != '/') return false;
  return true;
}

std::string visible_text(const DeviceSelectionInput& in) {
  return in.cuda_visible_devices ? " (CUDA_VISIBLE_DEVICES=" + *in.cuda_visible_devices + ")" : "";
}

}  // namespace

void validate_cuda_visible_devices(const std::string& text) {
  if (text.empty()) return;
  for (const std::string& token : detail::split_list(text)) {
    if (!is_ordinal(token) && !is_uuid(token))
      throw UsageError("CUDA_VISIBLE_DEVICES='" + text + "': '" + token +
                       "' is neither a device ordinal nor a GPU-/MIG- UUID");
  }
}

DeviceSelection select_devices(const DeviceSelectionInput& in) {
  if (in.gpus_per_process < 1) throw UsageError("-g/--gpus-per-process: must be at least 1");
  if (in.cuda_visible_devices) validate_cuda_visible_devices(*in.cuda_visible_devices);
  std::optional<int> slurm_index;
  if (in.slurm_localid) {
    slurm_index = parse_non_negative_int(in.slurm_localid->c_str());
    if (!slurm_index) throw UsageError("SLURM_LOCALID='" + *in.slurm_localid + "' is not a non-negative integer");
  }
  if (in.visible_devices <= 0)
    throw BackendError("no CUDA device on host " + in.host + visible_text(in) +
                       "; use --backend mpi for host memory");

  const int g = in.gpus_per_process;
  DeviceSelection selection;
  if (in.visible_devices == g) {
    for (int d = 0; d < g; ++d) selection.devices.push_back(d);
    selection.reason = "all " + std::to_string(g) + " visible GPU(s): bound to this process by the launcher";
    return selection;
  }
  const int index = slurm_index.value_or(in.local_rank);
  const int needed = in.local_size * g;
  if (needed > in.visible_devices || (index + 1) * g > in.visible_devices)
    throw UsageError("-g/--gpus-per-process: " + std::to_string(in.local_size) + " process(es) x " + std::to_string(g) +
                     " GPU(s) on host " + in.host + " need " + std::to_string(std::max(needed, (index + 1) * g)) +
                     " GPUs but " + std::to_string(in.visible_devices) + " are visible" + visible_text(in) +
                     "; NCCL cannot put two ranks on one GPU");
  for (int d = 0; d < g; ++d) selection.devices.push_back(index * g + d);
  selection.reason = std::string(slurm_index ? "SLURM_LOCALID " : "local rank ") + std::to_string(index) + " of " +
                     std::to_string(in.local_size) + " on " + std::to_string(in.visible_devices) + " visible GPUs";
  return selection;
}

}  // namespace commbench
