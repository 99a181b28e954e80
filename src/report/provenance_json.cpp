#include "commbench/report/provenance_json.hpp"

namespace commbench {
namespace {

using nlohmann::ordered_json;

ordered_json pairs_to_object(const std::vector<std::pair<std::string, std::string>>& pairs) {
  ordered_json object = ordered_json::object();
  for (const auto& [key, value] : pairs) object[key] = value;
  return object;
}

ordered_json text_or_null(const std::string& text) { return text.empty() ? ordered_json(nullptr) : ordered_json(text); }

}  // namespace

ordered_json provenance_json(const RunContext& context) {
  ordered_json provenance = ordered_json::object();
  provenance["program"] = context.program;
  provenance["version"] = context.version;
  provenance["commit"] = context.commit;
  provenance["command_line"] = context.command_line;
  provenance["started_at"] = context.started_at;
  provenance["backend"] = text_or_null(context.backend);
  provenance["backend_version"] = text_or_null(context.backend_version);
  provenance["mpi_version"] = context.mpi_version;
  provenance["ranks"] = context.ranks;
  provenance["nodes"] = context.nodes;
  provenance["rank_hosts"] = context.rank_hosts;
  provenance["devices"] = context.devices;
  provenance["settings"] = pairs_to_object(context.settings);
  provenance["slurm"] = context.slurm.empty() ? ordered_json(nullptr) : pairs_to_object(context.slurm);
  provenance["environment"] = pairs_to_object(context.environment);
  provenance["notes"] = context.notes;
  return provenance;
}

}  // namespace commbench
