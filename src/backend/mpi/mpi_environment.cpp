#include "commbench/backend/mpi/mpi_environment.hpp"

#include <mpi.h>

#include "commbench/core/error.hpp"

namespace commbench::mpi {

MpiEnvironment::MpiEnvironment(int* argc, char*** argv) {
  // SINGLE, as MPI_Init (a bare loop, nccl-tests) asks: only the main thread ever calls
  // MPI; the watchdog, heartbeat and compute threads never do. Asking for FUNNELED makes
  // Open MPI 4.1 take locks in its progress path, which slows small collectives by a cost
  // no application that calls MPI_Init pays (results/mpi-host-2core/README.md, "End to
  // end against a bare loop").
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
    throw BackendError("MPI_Init_thread failed");
  // Errors come back as codes so they become a BackendError with a message, not an
  // anonymous abort deep inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

bool MpiEnvironment::initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

std::string MpiEnvironment::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  const auto cut = version.find_first_of(",\n");
  if (cut != std::string::npos) version.resize(cut);
  while (!version.empty() && (version.back() == '\0' || version.back() == ' ')) version.pop_back();
  return version;
}

}  // namespace commbench::mpi
