#include "commbench/report/csv_reporter.hpp"

#include <algorithm>
#include <cstdio>

#include "commbench/core/csv_field.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/report/output_file.hpp"
#include "commbench/report/scheduler_job.hpp"

namespace commbench {

namespace {

struct CsvValue {
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(const std::string& s) const { return csv_escape(s); }
  std::string operator()(std::int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return significant_text(v, 9); }
};

}  // namespace

std::string csv_line(const std::vector<Field>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += std::visit(CsvValue{}, fields[i].value);
  }
  return line;
}

std::string csv_header(std::span<const std::string> extra_columns) {
  std::string line;
  for (std::string_view column : row_columns()) {
    if (!line.empty()) line += ',';
    line += column;
  }
  for (const std::string& column : extra_columns) line += ',' + csv_escape(column);
  return line;
}

std::vector<Field> fields_in_columns(const ResultRow& row, std::span<const std::string> extra_columns) {
  std::vector<Field> fields = row_fields(row);
  fields.resize(row_columns().size());
  for (const ExtraField& extra : row.extra) {
    if (std::find(extra_columns.begin(), extra_columns.end(), extra.name) == extra_columns.end())
      throw BackendError("internal error: row field '" + extra.name + "' was not declared in the run's extra columns");
  }
  for (const std::string& column : extra_columns) {
    const auto found =
        std::find_if(row.extra.begin(), row.extra.end(), [&](const ExtraField& f) { return f.name == column; });
    fields.push_back(Field{column, found == row.extra.end() ? FieldValue{std::monostate{}} : found->value});
  }
  return fields;
}

void CsvReporter::begin(const RunContext& context) {
  extra_columns_ = context.extra_columns;
  write_all(out_, slurm_comment_line(context) + csv_header(extra_columns_) + "\n", label_);
}

void CsvReporter::add_row(const ResultRow& row) {
  write_all(out_, csv_line(fields_in_columns(row, extra_columns_)) + "\n", label_);
}

}  // namespace commbench
