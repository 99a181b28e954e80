// The one interface every data plane implements (MPI on host memory, NCCL on GPU
// memory). The runner, statistics and reporters only ever talk to this, which is why
// everything tested with the MPI backend on CPUs holds for NCCL on GPUs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/backend/nccl_choices.hpp"
#include "commbench/core/op_case.hpp"

namespace commbench {

class PeerExchange;
class PeerRound;
class StreamSet;

// Send and receive buffers owned by a backend (host or device memory).
class Buffers {
 public:
  virtual ~Buffers() = default;
  Buffers() = default;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  virtual std::uint64_t send_capacity() const = 0;
  virtual std::uint64_t recv_capacity() const = 0;
};

// An operation started without waiting, so that compute can overlap it.
class PendingOperation {
 public:
  virtual ~PendingOperation() = default;
  virtual bool test() = 0;  // true once complete; drives progress
  virtual void wait() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string name() const = 0;             // "mpi", "nccl"
  virtual std::string library_version() const = 0;  // for headers and provenance
  virtual Bootstrap& group() = 0;                   // the processes this backend's operations span
  // Ranks of the communicator: group().size() unless one process drives several devices
  // (NCCL's -g N), where it is processes x devices. busbw factors and check patterns use it.
  virtual int ranks() const = 0;

  // One line per device this process drives ("GPU 0: NVIDIA H100 ..., PCI 0000:1b:00.0");
  // empty for host memory.
  virtual std::vector<std::string> device_descriptions() const { return {}; }
  // PCI bus ids (lower case) of the GPUs this process drives; empty for host memory.
  virtual std::vector<std::string> device_bus_ids() const { return {}; }

  // Why this backend cannot run the combination, or nullopt when it can.
  virtual std::optional<std::string> unsupported_reason(Collective op, DataType dtype, ReduceOp redop) const = 0;
  // Why this backend has no in-place form of `op`, or nullopt when it has one.
  virtual std::optional<std::string> unsupported_in_place(Collective) const { return std::nullopt; }

  // Throws UsageError for a case this backend cannot run (e.g. an element count beyond
  // what one call takes). Called once for the whole plan, before anything runs.
  virtual void validate_plan(std::span<const OpCase> plan) const = 0;

  // Collective over group(). Throws UsageError when the memory cannot be had.
  virtual std::unique_ptr<Buffers> allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) = 0;
  // Collective over group(): refuses with one UsageError, before anything is allocated,
  // `bytes_per_rank` of buffers the memory they live in cannot hold (the node's available
  // host memory for all its ranks, or each GPU's free memory). `what` starts the message,
  // e.g. "the step's buffers (--params, --layers, --seq)". A backend without such
  // knowledge checks nothing.
  virtual void require_memory(std::uint64_t /*bytes_per_rank*/, const std::string& /*what*/) {}
  // Memory the library takes for itself during one call of `c`, beside the buffers (an
  // MPI reduction's temporary copy); counted by require_memory's callers.
  virtual std::uint64_t library_scratch_bytes(const OpCase& /*c*/) const { return 0; }

  // Correctness: write the check pattern into the inputs of `c`, and count elements of
  // this rank's output that differ from the expectation after one operation.
  virtual void fill_inputs(const OpCase& c, Buffers& buffers) = 0;
  virtual std::uint64_t count_wrong(const OpCase& c, Buffers& buffers) = 0;
  // Damages one output element; used by tests to prove the checker catches errors.
  virtual void corrupt_output(const OpCase& c, Buffers& buffers) = 0;

  // Runs exactly one operation, eagerly, and waits for it: what a correctness check
  // verifies (never a replayed graph of several).
  virtual void run_single(const OpCase& c, Buffers& buffers) = 0;
  // Runs `iterations` operations back to back and returns this rank's elapsed seconds.
  virtual double time_batch(const OpCase& c, Buffers& buffers, std::uint64_t iterations) = 0;
  // Starts one operation and returns at once.
  virtual std::unique_ptr<PendingOperation> start(const OpCase& c, Buffers& buffers) = 0;

  // A backend over a sub-group of group(): same colour → same sub-group, ordered by key.
  virtual std::unique_ptr<Backend> split(int color, int key) = 0;

  // --profile-range: why this backend cannot open a profiler's capture range, or nullopt;
  // and opening (true) or closing it: cudaProfilerStart/Stop on every device it drives.
  virtual std::optional<std::string> capture_range_unavailable() const;
  virtual void set_capture_range(bool /*start*/) {}

  // What the library chose for the operations since the last call (NCCL: algorithm,
  // protocol, channels and warps, from its profiler plugin); no launches where it cannot
  // say, and library_choices_unavailable() says why.
  virtual NcclChoiceSummary take_library_choices() { return {}; }
  virtual std::optional<std::string> library_choices_unavailable() const;

  // Called from the watchdog thread just before the process ends on a timeout: release
  // what would otherwise outlive the process (NCCL communicators). Must not throw.
  virtual void abort() noexcept {}

  // ---- Extensions for bench-patterns and bench-p2p; each concept has its own header ----
  // Point-to-point transfers of `message_bytes` each along `round` (peer_exchange.hpp),
  // with their buffers. Collective over group(): every rank calls it, idle ones too.
  // Throws UsageError when the memory cannot be had; BackendError where unimplemented.
  virtual std::unique_ptr<PeerExchange> peer_exchange(const PeerRound& round, std::uint64_t message_bytes);
  // Named streams, events and the calibrated compute stand-in (stream_set.hpp), for
  // overlapping communication with compute. BackendError where unimplemented.
  virtual std::unique_ptr<StreamSet> streams();
};

}  // namespace commbench
