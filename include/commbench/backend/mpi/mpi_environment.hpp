// Owns MPI initialisation for the life of a command.
#pragma once

#include <string>

namespace commbench::mpi {

class MpiEnvironment {
 public:
  MpiEnvironment(int* argc, char*** argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  static std::string library_version();  // MPI_Get_library_version, first line
  static bool initialized();
};

}  // namespace commbench::mpi
