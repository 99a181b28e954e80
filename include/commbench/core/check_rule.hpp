// How a collective's output follows from the check pattern of its inputs. A plain enum
// (no table, no strings) because the GPU check kernels read it too: the descriptor of a
// collective names its rule, and check_pattern.hpp implements every rule once for host
// and device.
#pragma once

namespace commbench {

enum class CheckRule {
  reduced_everywhere,  // allreduce: every rank holds the reduction of all inputs
  reduced_at_root,     // reduce: only the root's output is defined
  reduced_own_chunk,   // reducescatter: rank r holds chunk r of the reduction
  gathered_chunks,     // allgather: chunk s is rank s's input
  copied_from_root,    // broadcast: the root's input
  exchanged_chunks,    // alltoall: chunk s is chunk r of rank s's input
  from_previous_rank,  // sendrecv: the input of rank r-1 (a ring)
  from_one_source,     // one received piece of alltoallv: CheckSpec::source's input, from the piece's first index
};

}  // namespace commbench
