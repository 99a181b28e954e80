#include "commbench/backend/device_selection.hpp"

#include <cctype>

#include <fmt/format.h>

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

namespace {

bool disjoint(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& x : a)
    for (const std::string& y : b)
      if (x == y) return false;
  return true;
}

}  // namespace

DeviceSelection select_devices(const DeviceSelectionInput& in) {
  const int g = in.gpus_per_process;
  if (g < 1) throw UsageError("-g/--gpus-per-process: must be at least 1");
  if (in.cuda_visible_devices) validate_cuda_visible_devices(*in.cuda_visible_devices);
  if (in.slurm_localid && !parse_non_negative_int(in.slurm_localid->c_str()))
    throw UsageError("SLURM_LOCALID='" + *in.slurm_localid + "' is not a non-negative integer");
  const int local_size = static_cast<int>(in.node_visible.size());
  if (in.local_rank < 0 || in.local_rank >= local_size) throw BackendError("device selection: local rank out of range");
  const std::vector<std::string>& mine = in.node_visible[static_cast<std::size_t>(in.local_rank)];
  const int visible = static_cast<int>(mine.size());
  if (visible == 0) throw BackendError("no CUDA device on host " + in.host + visible_text(in));

  bool all_same = true, all_disjoint = true;
  for (int a = 0; a < local_size; ++a) {
    all_same = all_same && in.node_visible[static_cast<std::size_t>(a)] == mine;
    for (int b = a + 1; b < local_size; ++b)
      all_disjoint = all_disjoint && disjoint(in.node_visible[static_cast<std::size_t>(a)],
                                              in.node_visible[static_cast<std::size_t>(b)]);
  }

  DeviceSelection selection;
  if (all_disjoint && local_size > 1) {
    if (g > visible)
      throw UsageError(fmt::format("-g/--gpus-per-process: {} GPUs per process, but this process on host {} sees {}{}",
                                   g, in.host, visible, visible_text(in)));
    for (int d = 0; d < g; ++d) selection.devices.push_back(d);
    selection.reason = "the launcher gave each process its own GPUs";
    return selection;
  }
  if (!all_same)
    throw UsageError(
        fmt::format("CUDA_VISIBLE_DEVICES: the {} processes on host {} see overlapping but different GPU "
                    "sets; give each process its own GPUs or all of them the same",
                    local_size, in.host));
  const int needed = local_size * g;
  if (needed > visible)
    throw UsageError(
        fmt::format("-g/--gpus-per-process: {} process(es) x {} GPU(s) on host {} need {} GPUs but {} are "
                    "visible{}; NCCL cannot put two ranks on one GPU",
                    local_size, g, in.host, needed, visible, visible_text(in)));
  for (int d = 0; d < g; ++d) selection.devices.push_back(in.local_rank * g + d);
  selection.reason = fmt::format("local rank {} of {} on {} shared GPUs", in.local_rank, local_size, visible);
  return selection;
}

}  // namespace commbench
