// torch.profiler's Chrome trace (`export_chrome_trace`, `.json` or `.json.gz`) of one rank:
// its `distributedInfo` (rank, world size, process groups), the profiler steps
// (`ProfilerStep#N`), and each collective as the training thread called it (the `c10d::`
// operator) and as the backend ran it (gloo's `gloo:` ranges on its worker threads).
// docs/replay.md says what such a trace holds and lacks.
#pragma once

#include <string>

#include "commbench/core/error.hpp"
#include "commbench/replay/communication_trace.hpp"

namespace commbench {

// A whole JSON file that is no Chrome trace (no traceEvents): a ds_config.json beside the
// traces in a folder, which a folder's reading passes over.
class NotATrace : public UsageError {
 public:
  using UsageError::UsageError;
};

// UsageError naming the file: not readable, not a whole JSON trace (the byte offset), no
// distributedInfo (not a distributed job's trace), no communication in it; NotATrace.
RankTrace read_pytorch_trace(const std::string& path);

}  // namespace commbench
