// The seam between what is measured and how: the measurement loop (runner/measurement.hpp)
// times any Workload — one collective (runner/collective_workload.hpp), a training step's
// schedule, a round of peer-addressed pairs — with the same warm-up, batch sizing,
// stopping criterion, cross-rank agreement and watchdog. A new command writes a Workload,
// not a loop.
#pragma once

#include <cstdint>
#include <string>

namespace commbench {

class Workload {
 public:
  virtual ~Workload() = default;
  Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // How messages and the watchdog name it: "allreduce 1MiB float sum out-of-place".
  virtual std::string describe() const = 0;
  // Collective over the group: takes what timing needs (buffers, streams). Throws
  // UsageError when that cannot be had; the loop runs it under the watchdog.
  virtual void prepare() = 0;
  // Runs one instance eagerly and returns how many elements of this rank's output are
  // wrong; 0 for a workload with nothing to check.
  virtual std::uint64_t check() = 0;
  // Runs `iterations` instances back to back and returns this rank's elapsed seconds.
  virtual double time(std::uint64_t iterations) = 0;
  // Gives back what prepare() took (a no-op where the caller keeps it for the next one).
  virtual void release() = 0;
};

}  // namespace commbench
