#include "commbench/backend/mpi/mpi_pending.hpp"

#include "commbench/backend/mpi/mpi_bootstrap.hpp"

namespace commbench::mpi {

bool MpiPending::test() {
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
            "MPI_Testall");
  return done != 0;
}

void MpiPending::wait() {
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace commbench::mpi
