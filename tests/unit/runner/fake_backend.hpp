// An in-process backend over one local rank whose operations take scripted times: the
// measurement loop's and the runner's decisions (batch sizes, stop reasons, checks,
// buffer sizing) are tested without mpirun and without waiting for real operations.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/core/error.hpp"

namespace commbench::testing {

class FakeBuffers final : public Buffers {
 public:
  FakeBuffers(std::uint64_t send, std::uint64_t recv) : send_(send), recv_(recv) {}
  std::uint64_t send_capacity() const override { return send_; }
  std::uint64_t recv_capacity() const override { return recv_; }

 private:
  std::uint64_t send_, recv_;
};

class FakeBackend final : public Backend {
 public:
  // Seconds one operation of a case takes; `batch_index` counts time_batch calls.
  using OperationTime = std::function<double(const OpCase&, std::uint64_t batch_index)>;

  explicit FakeBackend(OperationTime operation_time) : operation_time_(std::move(operation_time)) {}

  std::string name() const override { return "fake"; }
  std::string library_version() const override { return "fake 1.0"; }
  Bootstrap& group() override { return group_; }
  int ranks() const override { return ranks_; }
  std::optional<std::string> unsupported_reason(Collective, DataType, ReduceOp) const override { return std::nullopt; }
  void validate_plan(std::span<const OpCase>) const override {}

  std::unique_ptr<Buffers> allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override {
    allocations.push_back(send_bytes + recv_bytes);
    return std::make_unique<FakeBuffers>(send_bytes, recv_bytes);
  }
  void fill_inputs(const OpCase&, Buffers&) override { calls.push_back("fill"); }
  std::uint64_t count_wrong(const OpCase&, Buffers&) override { return wrong_elements; }
  void corrupt_output(const OpCase&, Buffers&) override { ++wrong_elements; }
  void run_single(const OpCase&, Buffers&) override { calls.push_back("single"); }
  double time_batch(const OpCase& c, Buffers&, std::uint64_t iterations) override {
    batches.push_back(iterations);
    return static_cast<double>(iterations) * operation_time_(c, batches.size() - 1);
  }
  std::unique_ptr<PendingOperation> start(const OpCase&, Buffers&) override {
    throw BackendError("the fake backend does not start operations");
  }
  std::unique_ptr<Backend> split(int, int) override { throw BackendError("the fake backend does not split"); }
  // --profile-range: a capture range only where `can_capture`; each switch is recorded
  // with the number of batches timed before it.
  std::optional<std::string> capture_range_unavailable() const override {
    return can_capture ? std::nullopt : Backend::capture_range_unavailable();
  }
  void set_capture_range(bool start) override { captures.push_back({start, batches.size()}); }

  int ranks_ = 4;  // what busbw factors use; the group itself is one local rank
  std::uint64_t wrong_elements = 0;
  std::vector<std::uint64_t> allocations;  // send + recv bytes of every allocation, in order
  std::vector<std::uint64_t> batches;      // iterations of every time_batch call, in order
  std::vector<std::string> calls;
  bool can_capture = false;
  std::vector<std::pair<bool, std::size_t>> captures;  // (opened, batches timed before)

 private:
  OperationTime operation_time_;
  LocalBootstrap group_;
};

}  // namespace commbench::testing
