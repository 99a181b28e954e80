// The GPU backend: NCCL collectives on device memory, one NCCL rank per GPU. Its header
// holds no CUDA or NCCL type, so only src/backend/nccl compiles against them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/bootstrap.hpp"

namespace commbench::nccl {

struct NcclOptions {
  int gpus_per_process = 1;                 // -g: GPUs one process drives (grouped init)
  bool register_buffers = false;            // --register: ncclMemAlloc + ncclCommRegister
  std::uint64_t cuda_graph_iterations = 0;  // --cuda-graph N: capture N ops, replay the graph
  bool blocking = false;                    // --blocking: synchronise after every operation
};

// CUDA devices this process can see; 0 when there is no driver or no device (never throws).
int visible_cuda_devices();

struct CudaDeviceInfo {
  std::string bus_id;  // lower case, "0000:18:00.0"
  std::string name;
  int sm = 0;  // compute capability x 10
};
// Every CUDA device this process sees, for the topology probe. Never throws: without a
// driver or device it returns none and says why in `why_none`.
std::vector<CudaDeviceInfo> list_cuda_devices(std::string& why_none);

class NcclBackend final : public Backend {
 public:
  // Collective over `group` (MPI, or a single process): selects GPUs, creates
  // communicators (unique id broadcast over the group). Throws BackendError "no CUDA
  // device" where there is none.
  NcclBackend(std::unique_ptr<Bootstrap> group, const NcclOptions& options);
  ~NcclBackend() override;

  std::string name() const override { return "nccl"; }
  std::string library_version() const override;
  Bootstrap& group() override { return *group_; }
  int ranks() const override;
  std::vector<std::string> device_descriptions() const override;
  std::vector<std::string> device_bus_ids() const override;

  std::optional<std::string> unsupported_reason(Collective op, DataType dtype, ReduceOp redop) const override;
  std::optional<std::string> unsupported_in_place(Collective op) const override;
  void validate_plan(std::span<const OpCase> plan) const override;
  std::unique_ptr<Buffers> allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void require_memory(std::uint64_t bytes_per_rank, const std::string& what) override;
  void fill_inputs(const OpCase& c, Buffers& buffers) override;
  std::uint64_t count_wrong(const OpCase& c, Buffers& buffers) override;
  void corrupt_output(const OpCase& c, Buffers& buffers) override;
  void run_single(const OpCase& c, Buffers& buffers) override;
  double time_batch(const OpCase& c, Buffers& buffers, std::uint64_t iterations) override;
  std::unique_ptr<PendingOperation> start(const OpCase& c, Buffers& buffers) override;
  std::unique_ptr<Backend> split(int color, int key) override;
  void abort() noexcept override;
  std::optional<std::string> capture_range_unavailable() const override { return std::nullopt; }
  void set_capture_range(bool start) override;
  NcclChoiceSummary take_library_choices() override;
  std::optional<std::string> library_choices_unavailable() const override;
  // Extensions (nccl_peer_exchange.cpp, nccl_streams.cpp).
  std::unique_ptr<PeerExchange> peer_exchange(const PeerRound& round, std::uint64_t message_bytes) override;
  std::unique_ptr<StreamSet> streams() override;

  struct State;
  // The extensions' door (nccl_state_access.hpp): a stream set reaches a split's state.
  friend State& state_of(NcclBackend& backend);

 private:
  NcclBackend(std::unique_ptr<Bootstrap> group, std::shared_ptr<State> state);
  std::unique_ptr<Bootstrap> group_;
  std::shared_ptr<State> state_;
};

}  // namespace commbench::nccl
