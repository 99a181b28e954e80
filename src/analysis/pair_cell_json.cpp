#include "commbench/analysis/pair_cell_json.hpp"

#include <string>

#include "commbench/analysis/optional_json.hpp"

namespace commbench {

nlohmann::ordered_json cell_json(const PairCell& cell) {
  return {{"src_host", cell.src_host},
          {"src_rank", cell.src_rank},
          {"src_device", cell.src_device},
          {"dst_host", cell.dst_host},
          {"dst_rank", cell.dst_rank},
          {"dst_device", cell.dst_device},
          {"bytes", cell.bytes},
          {"direction", std::string(direction_text(cell))},
          {"round", cell.round},
          {"gbps", cell.gbps},
          {"latency_us", optional_json(cell.latency_us)},
          {"theoretical_gbps", optional_json(cell.theoretical_gbps)},
          {"efficiency", optional_json(cell.efficiency)},
          {"flagged", cell.flagged},
          {"reason", cell.flag_reason},
          {"link", cell.link},
          {"rail", optional_json(cell.rail)},
          {"method", cell.method}};
}

}  // namespace commbench
