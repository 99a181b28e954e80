// Reads a Chrome trace JSON (torch.profiler's export) as it streams: each element of the
// top-level `traceEvents` array is found by a scan of its brackets and strings, and only
// those the caller wants (by their text) are parsed, handed over and dropped; the other
// top-level members are kept whole. A trace of gigabytes is read at the speed of the scan,
// in the memory of its largest event.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace commbench {

struct StreamedTrace {
  std::map<std::string, nlohmann::json> members;  // every top-level member but traceEvents
  std::uint64_t events = 0;                       // elements of traceEvents seen
  bool had_events = false;                        // a traceEvents array was there
  bool not_an_object = false;                     // the text starts as JSON that is no object
};

// `wanted` sees each event's JSON text; `on_event` gets the events it wanted, parsed, in
// order. A text that starts as another JSON value (an array, a string, a number) is
// not_an_object, read no further. UsageError naming `path` and the byte when the text is
// malformed where the scan or a wanted event's parse finds it, or is cut short.
StreamedTrace stream_trace_events(const std::string& path, const std::function<bool(std::string_view text)>& wanted,
                                  const std::function<void(const nlohmann::json& event)>& on_event);

}  // namespace commbench
