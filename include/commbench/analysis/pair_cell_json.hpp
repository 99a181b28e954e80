// A bench-p2p cell as JSON: the shape of the "cells" of --json (commbench.p2p/1).
#pragma once

#include <nlohmann/json.hpp>

#include "commbench/p2p/pair_matrix.hpp"

namespace commbench {

nlohmann::ordered_json cell_json(const PairCell& cell);

}  // namespace commbench
