// Nonblocking MPI requests as one PendingOperation: what every started MPI operation
// (collective, ring sendrecv, peer round) hands back.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "commbench/backend/backend.hpp"

namespace commbench::mpi {

class MpiPending final : public PendingOperation {
 public:
  // `keep_alive` holds what MPI reads until the requests complete (a non-blocking
  // alltoallv's count arrays), or nothing.
  explicit MpiPending(std::vector<MPI_Request> requests, std::shared_ptr<const void> keep_alive = nullptr)
      : requests_(std::move(requests)), keep_alive_(std::move(keep_alive)) {}
  bool test() override;  // MPI_Testall: also what makes MPI progress
  void wait() override;  // MPI_Waitall

 private:
  std::vector<MPI_Request> requests_;
  std::shared_ptr<const void> keep_alive_;
};

}  // namespace commbench::mpi
