#include "commbench/report/csv_reporter.hpp"

#include "commbench/core/csv_field.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/report/output_file.hpp"

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

std::string csv_header() {
  std::string line;
  for (std::string_view column : row_columns()) {
    if (!line.empty()) line += ',';
    line += column;
  }
  return line;
}

void CsvReporter::begin(const RunContext&) { write_all(out_, csv_header() + "\n", label_); }

void CsvReporter::add_row(const ResultRow& row) { write_all(out_, csv_line(row_fields(row)) + "\n", label_); }

}  // namespace commbench
