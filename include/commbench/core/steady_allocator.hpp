// Keeps freed heap memory mapped for the life of the process, so an operation repeated a
// thousand times measures the network and the library, not page faults. Without it glibc
// hands an MPI library's per-call temporary buffer (MPI_Reduce_scatter_block's, say) back
// to the kernel after every call and faults it in again on the next: about 230 page faults
// per 1 MiB reduce-scatter, which read 5.6x a bare loop's time (docs/methodology.md,
// "Memory that stays mapped"). Buffers are still returned explicitly (malloc_trim) before
// each new allocation of benchmark buffers, so the peak stays what the current collective
// needs.
#pragma once

#include <string>

namespace commbench {

// Applied unless COMMBENCH_MALLOC=default asks for glibc's own behaviour. Called once at
// start-up, before MPI initialises. Returns how the allocator was left, for the run's
// settings (`malloc`): "steady" or "default", with the reason when steady was wanted but
// could not be had.
std::string configure_allocator_from_environment();

}  // namespace commbench
