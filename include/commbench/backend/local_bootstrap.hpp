// The bootstrap of a process that runs alone (no MPI launcher, or a build without MPI):
// one rank, every agreement is the identity. With -g N one process still drives a whole
// node's GPUs through NCCL, as nccl-tests does without MPI.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/bootstrap.hpp"

namespace commbench {

class LocalBootstrap final : public Bootstrap {
 public:
  LocalBootstrap();

  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int node_count() const override { return 1; }
  const std::vector<std::string>& hostnames() const override { return hostnames_; }

  void barrier() override {}
  bool any(bool value) override { return value; }
  int bitwise_or(int bits) override { return bits; }
  int max(int value) override { return value; }
  double max(double value) override { return value; }
  double min(double value) override { return value; }
  double sum(double value) override { return value; }
  std::uint64_t sum(std::uint64_t value) override { return value; }
  RankValue max_with_rank(double value) override { return RankValue{value, 0}; }
  int first_rank_where(bool value) override { return value ? 0 : -1; }
  std::string broadcast(const std::string& text, int) override { return text; }
  std::vector<std::string> all_gather(const std::string& text) override { return {text}; }
  std::unique_ptr<Bootstrap> split(int, int) override { return std::make_unique<LocalBootstrap>(); }

 private:
  std::vector<std::string> hostnames_;
};

}  // namespace commbench
