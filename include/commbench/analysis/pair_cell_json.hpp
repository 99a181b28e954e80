// A bench-p2p cell as JSON: the shape of the "cells" of --json (commbench.p2p/1), which is
// also how bench-p2p --local sends a node's cells to rank 0.
#pragma once

#include <nlohmann/json.hpp>

#include "commbench/p2p/pair_matrix.hpp"

namespace commbench {

nlohmann::ordered_json cell_json(const PairCell& cell);
// Inverse of cell_json (the round-trip keeps every field).
PairCell cell_from_json(const nlohmann::ordered_json& json);

}  // namespace commbench
