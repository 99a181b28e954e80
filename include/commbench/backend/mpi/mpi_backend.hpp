// The host backend: MPI collectives on host memory. On a CPU cluster this is a real MPI
// benchmark (what the OSU micro-benchmarks measure); on a machine without GPUs it is how
// the shared planner, runner, statistics and reporters are exercised for real.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/mpi/mpi_bootstrap.hpp"

namespace commbench::mpi {

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(std::unique_ptr<MpiBootstrap> group);

  std::string name() const override { return "mpi"; }
  std::string library_version() const override;
  Bootstrap& group() override { return *group_; }
  int ranks() const override { return group_->size(); }

  std::optional<std::string> unsupported_reason(Collective op, DataType dtype, ReduceOp redop) const override;
  std::optional<std::string> unsupported_in_place(Collective op) const override;
  void validate_plan(std::span<const OpCase> plan) const override;
  std::unique_ptr<Buffers> allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void require_memory(std::uint64_t bytes_per_rank, const std::string& what) override;
  // Open MPI's reductions (allreduce, reduce, reduce-scatter) allocate a temporary as
  // large as the data they reduce.
  std::uint64_t library_scratch_bytes(const OpCase& c) const override;
  void fill_inputs(const OpCase& c, Buffers& buffers) override;
  std::uint64_t count_wrong(const OpCase& c, Buffers& buffers) override;
  void corrupt_output(const OpCase& c, Buffers& buffers) override;
  void run_single(const OpCase& c, Buffers& buffers) override { run_once(c, buffers); }
  double time_batch(const OpCase& c, Buffers& buffers, std::uint64_t iterations) override;
  std::unique_ptr<PendingOperation> start(const OpCase& c, Buffers& buffers) override;
  std::unique_ptr<Backend> split(int color, int key) override;
  // Extensions (mpi_peer_exchange.cpp, mpi_streams.cpp).
  std::unique_ptr<PeerExchange> peer_exchange(const PeerRound& round, std::uint64_t message_bytes) override;
  std::unique_ptr<StreamSet> streams() override;

 private:
  void run_once(const OpCase& c, Buffers& buffers);
  // UsageError when this node's available host memory cannot hold what its ranks need
  // together (`bytes_per_rank` is this rank's); collective over the group.
  void require_room_on_node(std::uint64_t bytes_per_rank, const std::string& what) const;
  std::unique_ptr<MpiBootstrap> group_;
};

// One MPI call takes at most 2^31-1 elements. A case whose call needs `elements` more
// than that is refused before anything is measured, with a one-line message naming its
// byte size and the largest size that works; empty when the case fits.
std::optional<std::string> mpi_count_refusal(const OpCase& c, std::uint64_t elements);

}  // namespace commbench::mpi
