#include "commbench/core/output_check.hpp"

#include "commbench/core/collective_descriptor.hpp"

namespace commbench {

CheckSpec check_spec_for(const OpCase& c, int rank, int ranks) {
  CheckSpec spec;
  spec.rule = descriptor_of(c.op).check_rule;
  spec.redop = c.redop;
  spec.root = c.root;
  spec.rank = rank;
  spec.ranks = ranks;
  spec.count = c.shape.count;
  spec.narrow = c.dtype == DataType::float8_e4m3 || c.dtype == DataType::float8_e5m2;
  return spec;
}

}  // namespace commbench
