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

PairCell cell_from_json(const nlohmann::ordered_json& json) {
  PairCell cell;
  cell.src_host = json.at("src_host").get<std::string>();
  cell.src_rank = json.at("src_rank").get<int>();
  cell.src_device = json.at("src_device").get<std::string>();
  cell.dst_host = json.at("dst_host").get<std::string>();
  cell.dst_rank = json.at("dst_rank").get<int>();
  cell.dst_device = json.at("dst_device").get<std::string>();
  cell.bytes = json.at("bytes").get<std::uint64_t>();
  // The one-way direction of a cell is said by src and dst; "forward" is how it is kept.
  cell.direction = json.at("direction").get<std::string>() == "both" ? PairDirection::both : PairDirection::forward;
  cell.round = json.at("round").get<int>();
  cell.gbps = json.at("gbps").get<double>();
  cell.latency_us = optional_from_json<double>(json.at("latency_us"));
  cell.theoretical_gbps = optional_from_json<double>(json.at("theoretical_gbps"));
  cell.efficiency = optional_from_json<double>(json.at("efficiency"));
  cell.flagged = json.at("flagged").get<bool>();
  cell.flag_reason = json.at("reason").get<std::string>();
  cell.link = json.at("link").get<std::string>();
  cell.rail = optional_from_json<int>(json.at("rail"));
  cell.method = json.at("method").get<std::string>();
  return cell;
}

}  // namespace commbench
