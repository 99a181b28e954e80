// Slurm's compressed hostlist syntax ("node[03,07-08],login1"), so the exclude list
// bench-validate prints pastes into `sbatch --exclude=` as it is.
#pragma once

#include <string>
#include <vector>

namespace commbench {

// Names that share a prefix and end in digits of the same width are folded into one
// bracket of ranges; others are listed as they are. The result is sorted (prefix, then
// number) and holds each name once. Empty input, empty string.
std::string compress_hostlist(const std::vector<std::string>& hosts);

}  // namespace commbench
