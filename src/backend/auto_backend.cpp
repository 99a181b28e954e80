#include "commbench/backend/auto_backend.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace commbench {

AutoBackendChoice choose_auto_backend(const std::vector<RankDevices>& ranks, int gpus_per_process) {
  AutoBackendChoice choice;
  bool any_sees = false;
  int first_blind = -1;
  std::map<std::string, std::vector<std::set<std::string>>> per_host;  // host → what each of its ranks sees
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    const RankDevices& seen = ranks[rank];
    any_sees = any_sees || !seen.bus_ids.empty();
    if (seen.bus_ids.empty() && first_blind < 0) first_blind = static_cast<int>(rank);
    per_host[seen.host].emplace_back(seen.bus_ids.begin(), seen.bus_ids.end());
  }
  if (!any_sees) return choice;  // no GPU anywhere: nothing to say
  if (first_blind >= 0) {
    choice.note = fmt::format("--backend auto chose mpi: rank {} (host {}) sees no CUDA device", first_blind,
                              ranks[static_cast<std::size_t>(first_blind)].host);
    return choice;
  }
  // The rules device selection applies (device_selection.hpp): the ranks of a host see
  // either the same GPUs, shared out by local rank, or pairwise disjoint ones.
  for (const auto& host_and_sets : per_host) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string& host = host_and_sets.first;
    const std::vector<std::set<std::string>>& seen_by_rank = host_and_sets.second;
    const int rank_count = static_cast<int>(seen_by_rank.size());
    const bool all_same = std::all_of(seen_by_rank.begin(), seen_by_rank.end(),
                                      [&](const std::set<std::string>& seen) { return seen == seen_by_rank.front(); });
    bool disjoint = true;
    std::set<std::string> gpus;
    std::size_t fewest = seen_by_rank.front().size();
    for (const std::set<std::string>& seen : seen_by_rank) {
      for (const std::string& gpu : seen) {
        const bool first_time = gpus.insert(gpu).second;
        disjoint = disjoint && first_time;
      }
      fewest = std::min(fewest, seen.size());
    }
    if (!all_same && !disjoint) {
      choice.note = "--backend auto chose mpi: the ranks on host " + host +
                    " see overlapping but different GPU sets (CUDA_VISIBLE_DEVICES), which NCCL device selection "
                    "refuses";
      return choice;
    }
    const bool enough = all_same ? rank_count * gpus_per_process <= static_cast<int>(gpus.size())
                                 : static_cast<int>(fewest) >= gpus_per_process;
    const int needed = rank_count * gpus_per_process;
    if (!enough) {
      const int fitting = static_cast<int>(gpus.size()) / gpus_per_process;
      choice.note = fmt::format(
          "--backend auto chose mpi: {} ranks on host {} need {} GPUs for NCCL (it cannot put two ranks on one GPU) "
          "but the host has {}; to measure the GPUs start {} rank{} per node",
          rank_count, host, needed, gpus.size(), fitting, fitting == 1 ? "" : "s");
      return choice;
    }
  }
  choice.nccl = true;
  return choice;
}

}  // namespace commbench
