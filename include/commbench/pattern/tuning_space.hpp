// The settings `bench-patterns --tune` searches, per framework, under the framework's own
// names: DDP's bucket_cap_mb; FSDP's wrapping unit and prefetch flags (and fully_shard's
// reshard_after_forward, FSDP2's own in place of the wrapper's); DeepSpeed ZeRO's
// zero_optimization keys (overlap_comm, the bucket sizes, and for stage 3 the prefetch
// bucket, persistence threshold and live-parameter limit). Each knob carries the values
// tried (docs/patterns.md says why these), read and written as text so the search, the
// trial table and the files it writes treat every knob alike.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "commbench/pattern/pattern_config.hpp"

namespace commbench {

struct TuningKnob {
  std::string key;                      // "bucket_cap_mb", "zero_optimization.reduce_bucket_size", ...
  std::vector<std::string> candidates;  // in the order they are tried; the config's own value among them
};

// The knobs of `config`'s framework in the order the search visits them (the ones that
// move the most time first), each with its candidates and the config's value. UsageError
// naming --tune for a pattern with no framework knobs (pipeline, tp, ep).
std::vector<TuningKnob> tuning_space(const PatternConfig& config);

// The knob's value in `config`, as a candidate is written ("25", "true", "BACKWARD_PRE").
std::string knob_value(const PatternConfig& config, const std::string& key);
// `config` with the knob set to `value` (one of its candidates); UsageError otherwise.
PatternConfig with_knob(PatternConfig config, const std::string& key, const std::string& value);

// The tuned settings as the framework reads them, JSON text: for ZeRO a ds_config.json
// fragment ({"zero_optimization": {...}}); for DDP and the FSDP1 wrapper the constructor's
// keyword arguments ({"bucket_cap_mb": 50}); for fully_shard (FSDP2) every knob, the unit
// too, since the user's code applies them per unit. Only the knobs tuning_space() lists appear.
std::string tuned_settings_json(const PatternConfig& config);
// Where the file goes in the user's code, one line for the console.
std::string tuned_settings_usage(const PatternConfig& config);

}  // namespace commbench
