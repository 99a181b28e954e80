// Reads a Chrome trace JSON (torch.profiler's export) as it streams: each element of the
// top-level `traceEvents` array is handed over as a small JSON object and then dropped,
// and the other top-level members are kept whole. A trace of gigabytes is read in the
// memory of its largest event.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace commbench {

struct StreamedTrace {
  std::map<std::string, nlohmann::json> members;  // every top-level member but traceEvents
  std::uint64_t events = 0;                        // elements of traceEvents seen
  bool had_events = false;                         // a traceEvents array was there
};

// Calls `on_event` for each element of traceEvents in order. UsageError naming `path` and
// the byte offset when the text is not JSON, is cut short, or is not an object at the top.
StreamedTrace stream_trace_events(const std::string& path,
                                  const std::function<void(const nlohmann::json& event)>& on_event);

}  // namespace commbench
