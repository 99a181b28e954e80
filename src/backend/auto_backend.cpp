#include "commbench/backend/auto_backend.hpp"

#include <map>
#include <set>

namespace commbench {

AutoBackendChoice choose_auto_backend(const std::vector<RankDevices>& ranks, int gpus_per_process) {
  AutoBackendChoice choice;
  bool any_sees = false;
  int first_blind = -1;
  std::map<std::string, std::pair<int, std::set<std::string>>> per_host;  // host → (ranks, distinct GPUs)
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    const RankDevices& seen = ranks[rank];
    any_sees = any_sees || !seen.bus_ids.empty();
    if (seen.bus_ids.empty() && first_blind < 0) first_blind = static_cast<int>(rank);
    auto& [rank_count, gpus] = per_host[seen.host];
    rank_count += 1;
    gpus.insert(seen.bus_ids.begin(), seen.bus_ids.end());
  }
  if (!any_sees) return choice;  // no GPU anywhere: nothing to say
  if (first_blind >= 0) {
    choice.note = "--backend auto chose mpi: rank " + std::to_string(first_blind) + " (host " +
                  ranks[static_cast<std::size_t>(first_blind)].host + ") sees no CUDA device";
    return choice;
  }
  for (const auto& [host, usage] : per_host) {
    const auto& [rank_count, gpus] = usage;
    const int needed = rank_count * gpus_per_process;
    if (needed > static_cast<int>(gpus.size())) {
      const int fitting = static_cast<int>(gpus.size()) / gpus_per_process;
      choice.note = "--backend auto chose mpi: " + std::to_string(rank_count) + " ranks on host " + host + " need " +
                    std::to_string(needed) + " GPUs for NCCL (it cannot put two ranks on one GPU) but the host has " +
                    std::to_string(gpus.size()) + "; to measure the GPUs start " + std::to_string(fitting) + " rank" +
                    (fitting == 1 ? "" : "s") + " per node";
      return choice;
    }
  }
  choice.nccl = true;
  return choice;
}

}  // namespace commbench
