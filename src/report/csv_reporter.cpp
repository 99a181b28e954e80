#include "commbench/report/csv_reporter.hpp"

#include <cstdio>

#include <fmt/format.h>

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
  return csv_header(record_kind("row"), extra_columns);
}

void CsvReporter::begin(const RunContext& context) {
  kind_ = &record_kind(context.record_kind);
  extra_columns_ = context.extra_columns;
  mixed_kinds_.clear();
  for (const std::string& name : context.mixed_record_kinds) mixed_kinds_.push_back(&record_kind(name));
  std::string header =
      mixed_kinds_.empty() ? csv_header(*kind_, extra_columns_) : mixed_csv_header(mixed_kinds_, extra_columns_);
  leading_cells_.clear();
  constant_cells_.clear();
  if (context.settings_in_csv && context.settings_lead_csv) {
    std::string names;
    for (const auto& [name, value] : context.settings) {
      names += csv_escape(name) + ',';
      leading_cells_ += csv_escape(value) + ',';
    }
    header = names + header;
  } else if (context.settings_in_csv) {
    for (const auto& [name, value] : context.settings) {
      header += ',' + csv_escape(name);
      constant_cells_ += ',' + csv_escape(value);
    }
  }
  std::string comments = slurm_comment_line(context);
  for (const std::string& comment : context.csv_comments) comments += fmt::format("# {}\n", comment);
  write_all(out_, comments + header + "\n", label_);
}

void CsvReporter::add_record(const Record& record) {
  // A file of one kind holds that kind only; the others (bench-collectives' nics) are in
  // the JSON document.
  if (mixed_kinds_.empty() && record.kind != kind_) return;
  const std::string line = mixed_kinds_.empty() ? csv_record_line(record, *kind_, extra_columns_)
                                                : mixed_csv_record_line(record, mixed_kinds_, extra_columns_);
  write_all(out_, leading_cells_ + line + constant_cells_ + "\n", label_);
}

}  // namespace commbench
