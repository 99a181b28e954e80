// Nonblocking MPI requests as one PendingOperation: what every started MPI operation
// (collective, ring sendrecv, peer round) hands back.
#pragma once

#include <mpi.h>

#include <vector>

#include "commbench/backend/backend.hpp"

namespace commbench::mpi {

class MpiPending final : public PendingOperation {
 public:
  explicit MpiPending(std::vector<MPI_Request> requests) : requests_(std::move(requests)) {}
  bool test() override;  // MPI_Testall: also what makes MPI progress
  void wait() override;  // MPI_Waitall

 private:
  std::vector<MPI_Request> requests_;
};

}  // namespace commbench::mpi
