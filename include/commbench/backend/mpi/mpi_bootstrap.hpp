#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/bootstrap.hpp"

namespace commbench::mpi {

// A Bootstrap over a duplicate of an MPI communicator (so our traffic never matches
// the caller's messages).
class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(MPI_Comm parent = MPI_COMM_WORLD);
  ~MpiBootstrap() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  int node_count() const override { return node_count_; }
  const std::vector<std::string>& hostnames() const override { return hostnames_; }

  void barrier() override;
  bool any(bool value) override;
  int bitwise_or(int bits) override;
  int max(int value) override;
  double max(double value) override;
  double min(double value) override;
  double sum(double value) override;
  std::uint64_t sum(std::uint64_t value) override;
  RankValue max_with_rank(double value) override;
  int first_rank_where(bool value) override;
  std::string broadcast(const std::string& text, int root) override;
  std::vector<std::string> all_gather(const std::string& text) override;
  std::unique_ptr<Bootstrap> split(int color, int key) override;
  std::unique_ptr<MpiBootstrap> split_mpi(int color, int key);

  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int node_count_ = 1;
  std::vector<std::string> hostnames_;
};

// Throws BackendError naming `what` when an MPI call fails.
void check_mpi(int code, const char* what);

}  // namespace commbench::mpi
