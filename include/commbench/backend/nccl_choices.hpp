// What NCCL chose for the collectives of a case: algorithm, protocol, channels and warps,
// as NCCL's profiler plugin interface hands them to the plugin this program carries
// (backend/nccl_profiler_plugin.cpp). The plugin adds every collective NCCL launches to
// the process's tally; the NCCL backend takes the tally after each case.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace commbench {

struct NcclChoice {
  std::string algo;   // "RING", "TREE", "NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT"
  std::string proto;  // "LL", "LL128", "SIMPLE"
  int channels = 0;
  int warps = 0;
};

// The collectives of one case: each field's most frequent value, "mixed" when NCCL varied
// it (the split says how), and how many launches were seen.
struct NcclChoiceSummary {
  std::uint64_t launches = 0;
  std::string algo, proto, channels, warps;  // "RING", "12", "mixed"; empty without launches
  std::map<std::string, std::uint64_t> algo_split, proto_split, channels_split, warps_split;
};

class NcclChoiceTally {
 public:
  void add(const NcclChoice& choice);
  // What was added since the last take, and a fresh start.
  NcclChoiceSummary take();

 private:
  std::mutex mutex_;
  NcclChoiceSummary open_;
};

// The one tally of this process, which the plugin's entry points fill.
NcclChoiceTally& nccl_choice_tally();

// The value NCCL_PROFILER_PLUGIN takes to find the plugin in this program's own symbols.
inline constexpr const char* kStaticProfilerPlugin = "STATIC_PLUGIN";

}  // namespace commbench
