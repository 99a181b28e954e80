#include "commbench/report/json_reporter.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "commbench/core/error.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance_json.hpp"

namespace commbench {
namespace {

using nlohmann::ordered_json;

// A summary figure the run may lack (no check, no busbw): null then, as the schema says.
template <typename Value>
ordered_json or_null(const std::optional<Value>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

ordered_json to_json(const FieldValue& v, ValueType type = ValueType::text) {
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  if (std::holds_alternative<std::int64_t>(v)) {
    if (type == ValueType::boolean) return std::get<std::int64_t>(v) != 0;
    return std::get<std::int64_t>(v);
  }
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  return nullptr;
}

// The document with "interrupted_phase" right after "complete", where a reader looks for
// why the run is incomplete.
ordered_json with_interrupted_phase(const ordered_json& doc, const std::string& phase) {
  ordered_json placed = ordered_json::object();
  for (const auto& [key, value] : doc.items()) {
    if (key == "interrupted_phase") continue;
    placed[key] = value;
    if (key == "complete") placed["interrupted_phase"] = phase;
  }
  return placed;
}

}  // namespace

struct JsonReporter::State {
  std::string path;
  std::FILE* stream = nullptr;
  std::string record_kind;
  ordered_json document;
};

JsonReporter::JsonReporter(std::string path, std::FILE* stream) : state_(std::make_unique<State>()) {
  state_->path = std::move(path);
  state_->stream = stream;
}

JsonReporter::~JsonReporter() = default;

void JsonReporter::begin(const RunContext& ctx) {
  ordered_json& doc = state_->document;
  doc["schema"] = ctx.schema.empty() ? kJsonSchema : ctx.schema;
  doc["complete"] = false;
  doc["provenance"] = provenance_json(ctx);
  state_->record_kind = ctx.record_kind;
  doc[std::string(record_kind(ctx.record_kind).plural)] = ordered_json::array();
  for (const std::string& kind : ctx.mixed_record_kinds)
    doc[std::string(record_kind(kind).plural)] = ordered_json::array();
}

ordered_json record_json(const Record& record) {
  ordered_json object = ordered_json::object();
  const std::span<const Column> columns = record.kind->columns;
  const std::vector<Field> fields = record_fields(record);
  for (std::size_t i = 0; i < fields.size(); ++i)
    object[std::string(fields[i].name)] =
        to_json(fields[i].value, i < columns.size() ? columns[i].type : ValueType::text);
  return object;
}

void JsonReporter::add_record(const Record& record) {
  ordered_json object = record_json(record);
  ordered_json& records = state_->document[std::string(record.kind->plural)];
  if (records.is_null()) records = ordered_json::array();
  records.push_back(std::move(object));
}

void JsonReporter::finish(const RunSummary& summary) {
  ordered_json& doc = state_->document;
  doc["complete"] = summary.complete;
  if (!summary.complete && !summary.interrupted_phase.empty()) doc = with_interrupted_phase(doc, summary.interrupted_phase);
  for (const std::string& note : summary.notes) doc["provenance"]["notes"].push_back(note);
  for (const auto& [key, value] : summary.sections) doc[key] = value;
  if (state_->record_kind == "row")
    doc["summary"] = {{"rows", summary.rows},
                      {"wrong_elements", or_null(summary.wrong_elements)},
                      {"check_failures", summary.check_failures},
                      {"threshold_rows", summary.threshold_rows},
                      {"threshold_failures", summary.threshold_failures},
                      {"average_busbw_gbps", or_null(summary.average_busbw_gbps)},
                      {"exit_code", summary.exit_code}};
  const std::string text = doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  if (state_->path.empty()) {
    write_all(state_->stream, text, "--format json <stdout>");
    return;
  }
  write_file_atomically(state_->path, text, "--json");
}

}  // namespace commbench
