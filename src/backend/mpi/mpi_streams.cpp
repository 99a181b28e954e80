#include "commbench/backend/host_stream_set.hpp"
#include "commbench/backend/mpi/mpi_backend.hpp"

namespace commbench::mpi {

// MPI operations run on the host: the host stream queues, with a compute thread beside
// the thread that tests MPI requests.
std::unique_ptr<StreamSet> MpiBackend::streams() { return std::make_unique<HostStreamSet>(*this); }

}  // namespace commbench::mpi
