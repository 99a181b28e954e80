// What --check compares one rank's output against: the check pattern's spec for a case,
// taken from the collective's descriptor, and the pieces of the output it applies to.
// Both backends check through these, so they check the same thing.
#pragma once

#include <cstdint>
#include <vector>

#include "commbench/core/check_pattern.hpp"
#include "commbench/core/op_case.hpp"

namespace commbench {

CheckSpec check_spec_for(const OpCase& c, int rank, int ranks);

// A piece of one rank's output region with its own spec: element i of the piece is
// expected_output(spec, first_index + i).
struct CheckedPiece {
  std::uint64_t first_element = 0;  // offset into the output region, in elements
  std::uint64_t elements = 0;
  std::uint64_t first_index = 0;
  CheckSpec spec;
};

// The whole output region as one piece; for alltoallv one piece per source that sent
// this rank anything, each expected to hold the part of the source's input sent here.
std::vector<CheckedPiece> checked_pieces(const OpCase& c, int rank, int ranks, std::uint64_t output_elements);

}  // namespace commbench
