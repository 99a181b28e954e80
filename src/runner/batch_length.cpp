#include "commbench/runner/batch_length.hpp"

namespace commbench {

double default_batch_seconds(const std::string& backend) { return backend == "nccl" ? 0.005 : 0.001; }

}  // namespace commbench
