// What the launcher (mpirun, srun) tells a process through its environment before MPI
// starts: used to print usage errors once instead of once per rank.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace commbench {

using EnvironmentLookup = std::function<const char*(const char*)>;

// Global rank from OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID (first that
// holds a non-negative integer); nullopt when not launched by one of them.
std::optional<int> launcher_rank(const EnvironmentLookup& getenv_fn);

// How many processes the launcher started: OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// SLURM_STEP_NUM_TASKS (first that holds a non-negative integer). Not SLURM_NTASKS: a
// batch script has it (and SLURM_PROCID) without being one of a step's tasks.
std::optional<int> launcher_size(const EnvironmentLookup& getenv_fn);

// Whether a launcher (mpirun, srun) started this process, as its environment said when the
// program started: MPI_Init may add the variables to a process started alone.
bool started_by_launcher();

// Parses a non-negative decimal integer; nullopt for anything else.
std::optional<int> parse_non_negative_int(const char* text);

}  // namespace commbench
