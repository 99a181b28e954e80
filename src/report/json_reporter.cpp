#include "commbench/report/json_reporter.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "commbench/core/error.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/provenance_json.hpp"

namespace commbench {
namespace {

using nlohmann::ordered_json;

ordered_json to_json(const FieldValue& v) {
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  if (std::holds_alternative<std::int64_t>(v)) return std::get<std::int64_t>(v);
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  return nullptr;
}

}  // namespace

struct JsonReporter::State {
  std::string path;
  std::FILE* stream = nullptr;
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
  doc["rows"] = ordered_json::array();
}

void JsonReporter::add_row(const ResultRow& row) {
  ordered_json object = ordered_json::object();
  for (const Field& field : row_fields(row)) object[std::string(field.name)] = to_json(field.value);
  state_->document["rows"].push_back(std::move(object));
}

void JsonReporter::finish(const RunSummary& summary) {
  ordered_json& doc = state_->document;
  doc["complete"] = summary.complete;
  doc["summary"] = {{"rows", summary.rows},
                    {"wrong_elements", summary.wrong_elements},
                    {"check_failures", summary.check_failures},
                    {"threshold_rows", summary.threshold_rows},
                    {"threshold_failures", summary.threshold_failures},
                    {"average_busbw_gbps", summary.average_busbw_gbps},
                    {"exit_code", summary.exit_code}};
  const std::string text = doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  if (state_->path.empty()) {
    write_all(state_->stream, text, "--format json <stdout>");
    return;
  }
  write_file_atomically(state_->path, text, "--json");
}

}  // namespace commbench
