// What --check compares one rank's output against: the check pattern's spec for a case,
// taken from the collective's descriptor, identical for both backends.
#pragma once

#include "commbench/core/check_pattern.hpp"
#include "commbench/core/op_case.hpp"

namespace commbench {

CheckSpec check_spec_for(const OpCase& c, int rank, int ranks);

}  // namespace commbench
