// commbench's NCCL profiler plugin: it asks NCCL for collective events only and adds each
// launch's algorithm, protocol, channels and warps to the process's tally. It keeps no
// per-event state, so stop and state events cost nothing.
#include <algorithm>
#include <utility>

#include "commbench/backend/nccl_choices.hpp"
#include "commbench/backend/nccl_profiler_abi.hpp"

namespace commbench {
namespace {

std::string most_frequent(const std::map<std::string, std::uint64_t>& split) {
  if (split.empty()) return "";
  if (split.size() > 1) return "mixed";
  return split.begin()->first;
}

}  // namespace

void NcclChoiceTally::add(const NcclChoice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_.launches += 1;
  open_.algo_split[choice.algo] += 1;
  open_.proto_split[choice.proto] += 1;
  open_.channels_split[std::to_string(choice.channels)] += 1;
  open_.warps_split[std::to_string(choice.warps)] += 1;
}

NcclChoiceSummary NcclChoiceTally::take() {
  NcclChoiceSummary summary;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    summary = std::exchange(open_, NcclChoiceSummary{});
  }
  summary.algo = most_frequent(summary.algo_split);
  summary.proto = most_frequent(summary.proto_split);
  summary.channels = most_frequent(summary.channels_split);
  summary.warps = most_frequent(summary.warps_split);
  return summary;
}

NcclChoiceTally& nccl_choice_tally() {
  static NcclChoiceTally tally;
  return tally;
}

namespace nccl_profiler {
namespace {

// Every event gets the same handle: NCCL hands it back to stop and state calls, which
// have nothing to do.
char the_handle;

const char* text_or_unknown(const char* text) { return text != nullptr ? text : "unknown"; }

void add_launch(const char* algo, const char* proto, int channels, int warps) {
  nccl_choice_tally().add({text_or_unknown(algo), text_or_unknown(proto), channels, warps});
}

Result init_v3(void** context, int* activation_mask) {
  *context = &nccl_choice_tally();
  *activation_mask |= kEventColl;  // the mask is shared by every communicator: add, never clear
  return 0;
}

Result init_v4(void** context, int* activation_mask, const char*, std::uint64_t, int, int, int, Logger) {
  return init_v3(context, activation_mask);
}

Result init_v5(void** context, std::uint64_t, int* activation_mask, const char*, int, int, int, Logger) {
  return init_v3(context, activation_mask);
}

Result start_v3(void*, void** handle, DescriptorV3* d) {
  *handle = &the_handle;
  if (d->type == kEventColl) add_launch(d->coll.algo, d->coll.proto, d->coll.n_max_channels, d->coll.n_warps);
  return 0;
}

Result start_v4(void*, void** handle, DescriptorV4* d) {
  *handle = &the_handle;
  if (d->type == kEventColl) add_launch(d->coll.algo, d->coll.proto, d->coll.n_channels, d->coll.n_warps);
  return 0;
}

Result start_v5(void*, void** handle, DescriptorV5* d) {
  *handle = &the_handle;
  if (d->type == kEventColl) add_launch(d->coll.v4.algo, d->coll.v4.proto, d->coll.v4.n_channels, d->coll.v4.n_warps);
  return 0;
}

Result stop(void*) { return 0; }
Result record_state(void*, int, void*) { return 0; }
Result finalize(void*) { return 0; }

}  // namespace
}  // namespace nccl_profiler
}  // namespace commbench

extern "C" {
// Exported from the program (the bench executables link with --export-dynamic-symbol) so
// that NCCL_PROFILER_PLUGIN=STATIC_PLUGIN finds them.
__attribute__((visibility("default")))
commbench::nccl_profiler::TableV3 ncclProfiler_v3{"commbench",
                                                  commbench::nccl_profiler::init_v3,
                                                  commbench::nccl_profiler::start_v3,
                                                  commbench::nccl_profiler::stop,
                                                  commbench::nccl_profiler::record_state,
                                                  commbench::nccl_profiler::finalize};
__attribute__((visibility("default")))
commbench::nccl_profiler::TableV4 ncclProfiler_v4{"commbench",
                                                  commbench::nccl_profiler::init_v4,
                                                  commbench::nccl_profiler::start_v4,
                                                  commbench::nccl_profiler::stop,
                                                  commbench::nccl_profiler::record_state,
                                                  commbench::nccl_profiler::finalize};
__attribute__((visibility("default")))
commbench::nccl_profiler::TableV5 ncclProfiler_v5{"commbench",
                                                  commbench::nccl_profiler::init_v5,
                                                  commbench::nccl_profiler::start_v5,
                                                  commbench::nccl_profiler::stop,
                                                  commbench::nccl_profiler::record_state,
                                                  commbench::nccl_profiler::finalize};
}
