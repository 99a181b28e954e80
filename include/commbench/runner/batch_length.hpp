// How long a timed batch lasts unless the user says (--batch-time).
#pragma once

#include <string>

namespace commbench {

// The default for a backend ("nccl", "mpi"). A timed batch carries a cost of its own: on a
// GPU the first launch, which the batch's start event waits for, a few microseconds
// (results/gpu/h200/2026-11-28-2af8b41/batch-time-*.md). Batches of at least 5 ms keep it
// near 0.1 %. The MPI backend's host clock has no such wait, and there 1 ms batches reach a
// given noise sooner than 5 ms batches (docs/performance.md, "Default sweep").
double default_batch_seconds(const std::string& backend);

}  // namespace commbench
