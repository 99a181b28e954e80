#include "marked_calls.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace commbench {

namespace {

using Call = PytorchCommEvents::Call;

enum class MarkerKind { op, annotation, record };

struct Marker {
  const Call* event;
  MarkerKind kind;
  std::int64_t thread;
};

// Events without a thread are one thread of their own.
constexpr std::int64_t kNoThread = std::numeric_limits<std::int64_t>::min();

std::int64_t thread_of(const Call& call) { return call.thread.value_or(kNoThread); }

const Call*& slot_of(MarkedCall& call, MarkerKind kind) {
  switch (kind) {
    case MarkerKind::op:
      return call.op;
    case MarkerKind::annotation:
      return call.annotation;
    case MarkerKind::record:
      break;
  }
  return call.record;
}

// Whether `inner` lies within `outer`'s range: the profiler's microseconds are rounded, so
// an inner range may end a rounding step after its parent.
bool holds(const Call& outer, const Call& inner) {
  constexpr double kRoundingUs = 1e-3;
  return inner.ts >= outer.ts - kRoundingUs && inner.ts + inner.dur <= outer.ts + outer.dur + kRoundingUs;
}

bool holds_time(const Call& outer, double ts) { return ts >= outer.ts && ts <= outer.ts + outer.dur; }

}  // namespace

std::vector<MarkedCall> marked_calls(const PytorchCommEvents::CallList& ops,
                                     const PytorchCommEvents::CallList& annotations,
                                     const PytorchCommEvents::CallList& records) {
  std::vector<Marker> markers;
  for (const Call& event : ops) markers.push_back({&event, MarkerKind::op, thread_of(event)});
  for (const Call& event : annotations) markers.push_back({&event, MarkerKind::annotation, thread_of(event)});
  for (const Call& event : records) markers.push_back({&event, MarkerKind::record, thread_of(event)});
  // Per thread, outer before inner: by start, then the longer first, then the operator.
  std::stable_sort(markers.begin(), markers.end(), [](const Marker& a, const Marker& b) {
    return std::make_tuple(a.thread, a.event->ts, -a.event->dur, static_cast<int>(a.kind)) <
           std::make_tuple(b.thread, b.event->ts, -b.event->dur, static_cast<int>(b.kind));
  });
  std::vector<MarkedCall> calls;
  std::int64_t open_thread = kNoThread;
  bool open = false;
  for (const Marker& marker : markers) {
    if (open && marker.thread == open_thread && holds(*calls.back().outer, *marker.event)) {
      // A second marker of one kind inside a call (a coalesced group's records) adds nothing.
      const Call*& slot = slot_of(calls.back(), marker.kind);
      if (slot == nullptr) slot = marker.event;
      continue;
    }
    MarkedCall call;
    call.outer = marker.event;
    slot_of(call, marker.kind) = marker.event;
    calls.push_back(call);
    open = true;
    open_thread = marker.thread;
  }
  std::stable_sort(calls.begin(), calls.end(),
                   [](const MarkedCall& a, const MarkedCall& b) { return a.outer->ts < b.outer->ts; });
  return calls;
}

namespace {

// The calls on each thread, by the time they were made: where a launch's call is looked up.
class CallsByThread {
 public:
  explicit CallsByThread(std::vector<MarkedCall>& calls) {
    for (MarkedCall& call : calls) by_thread_[thread_of(*call.outer)].push_back(&call);
    for (auto& [thread, list] : by_thread_)
      std::stable_sort(list.begin(), list.end(),
                       [](const MarkedCall* a, const MarkedCall* b) { return a->outer->ts < b->outer->ts; });
  }

  // The call made on `thread` whose range holds `ts`; none when the thread made none then.
  MarkedCall* at(std::int64_t thread, double ts) const {
    const auto found = by_thread_.find(thread);
    if (found == by_thread_.end()) return nullptr;
    const std::vector<MarkedCall*>& list = found->second;
    auto after = std::upper_bound(list.begin(), list.end(), ts,
                                  [](double t, const MarkedCall* call) { return t < call->outer->ts; });
    // Calls on one thread do not overlap, bar rounding: the last one begun is the only one.
    if (after == list.begin()) return nullptr;
    MarkedCall* call = *std::prev(after);
    return holds_time(*call->outer, ts) ? call : nullptr;
  }

 private:
  std::map<std::int64_t, std::vector<MarkedCall*>> by_thread_;
};

}  // namespace

LaunchLinks link_kernels_by_launch(std::vector<MarkedCall>& calls, const std::vector<const Call*>& kernels,
                                   const std::vector<PytorchCommEvents::Launch>& launches) {
  LaunchLinks links;
  std::unordered_map<std::int64_t, const PytorchCommEvents::Launch*> launch_of;
  for (const PytorchCommEvents::Launch& launch : launches) launch_of.emplace(launch.correlation, &launch);
  links.linked = std::any_of(kernels.begin(), kernels.end(),
                             [&](const Call* k) { return k->correlation && launch_of.count(*k->correlation) > 0; });
  if (!links.linked) return links;
  const CallsByThread by_thread(calls);
  std::unordered_map<std::int64_t, MarkedCall*> by_record_id;
  for (MarkedCall& call : calls)
    if (call.record != nullptr && call.record->external_id) by_record_id.emplace(*call.record->external_id, &call);
  for (const Call* kernel_in_trace : kernels) {
    const Call& kernel = *kernel_in_trace;
    MarkedCall* owner = nullptr;
    if (kernel.correlation)
      if (const auto launch = launch_of.find(*kernel.correlation); launch != launch_of.end())
        owner = by_thread.at(launch->second->thread, launch->second->ts);
    // Older profilers wrote a kernel's correlation id as its External id too: that links it
    // to no operator.
    if (owner == nullptr && kernel.external_id && kernel.external_id != kernel.correlation)
      if (const auto record = by_record_id.find(*kernel.external_id); record != by_record_id.end()) {
        owner = record->second;
        links.by_external_id = true;
      }
    if (owner != nullptr)
      owner->runs.push_back(&kernel);
    else
      links.unclaimed.push_back(&kernel);
  }
  return links;
}

}  // namespace commbench
