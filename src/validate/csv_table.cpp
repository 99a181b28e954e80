#include "commbench/validate/csv_table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return std::nullopt;
  return static_cast<std::size_t>(it - header.begin());
}

namespace {

class CsvParser {
 public:
  CsvParser(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  std::vector<CsvRecord> records() {
    std::vector<CsvRecord> out;
    while (pos_ < text_.size()) {
      if (at_line_end()) {
        skip_line_end();
        continue;
      }
      out.push_back(record());
    }
    return out;
  }

  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw UsageError(fmt::format("{} line {}: {}", origin_, line, what));
  }

 private:
  bool at_line_end() const { return text_[pos_] == '\n' || text_[pos_] == '\r'; }

  // A lone CR is refused: it would make line numbers in errors disagree with editors.
  void skip_line_end() {
    if (text_[pos_] == '\r' && (pos_ + 1 >= text_.size() || text_[pos_ + 1] != '\n'))
      fail(line_, "a carriage return that does not end a line");
    pos_ += text_[pos_] == '\r' ? 2 : 1;
    ++line_;
  }

  CsvRecord record() {
    CsvRecord rec;
    rec.line = line_;
    while (true) {
      rec.fields.push_back(pos_ < text_.size() && text_[pos_] == '"' ? quoted_field() : plain_field());
      if (pos_ >= text_.size()) break;
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      skip_line_end();
      break;
    }
    return rec;
  }

  std::string plain_field() {
    std::string field;
    while (pos_ < text_.size() && text_[pos_] != ',' && !at_line_end()) {
      check_byte(text_[pos_]);
      if (text_[pos_] == '"') fail(line_, "a quote inside an unquoted field");
      field += text_[pos_++];
    }
    return field;
  }

  std::string quoted_field() {
    const std::size_t opened = line_;
    std::string field;
    ++pos_;
    while (true) {
      if (pos_ >= text_.size()) fail(opened, "a quoted field is never closed");
      const char c = text_[pos_++];
      check_byte(c);
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          field += '"';
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
      field += c;
    }
    if (pos_ < text_.size() && text_[pos_] != ',' && !at_line_end()) fail(line_, "text after a closing quote");
    return field;
  }

  void check_byte(char c) const {
    if (c == '\0') fail(line_, "a NUL byte (not a text file)");
  }

  std::string_view text_;
  const std::string& origin_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
};

// Comment lines before the header ("# slurm: ..." of a run under Slurm) become blank lines,
// which the parser skips: their text may hold quotes, and line numbers stay the file's.
std::string without_leading_comments(std::string_view text) {
  std::string kept(text);
  std::size_t line_start = 0;
  while (line_start < kept.size() && kept[line_start] == '#') {
    std::size_t line_end = kept.find('\n', line_start);
    if (line_end == std::string::npos) line_end = kept.size();
    kept.erase(line_start, line_end - line_start);
    line_start += 1;  // past the '\n' that now ends an empty line
  }
  return kept;
}

}  // namespace

CsvTable parse_csv(std::string_view text, const std::string& origin) {
  const std::string table_text = without_leading_comments(text);
  CsvParser parser(table_text, origin);
  std::vector<CsvRecord> records = parser.records();
  if (records.empty()) throw UsageError(origin + ": no header line");
  CsvTable table;
  table.header = std::move(records.front().fields);
  const std::size_t header_line = records.front().line;
  for (std::size_t i = 0; i < table.header.size(); ++i) {
    if (table.header[i].empty()) parser.fail(header_line, fmt::format("column {} has no name", i + 1));
    for (std::size_t j = 0; j < i; ++j)
      if (table.header[j] == table.header[i])
        parser.fail(header_line, "column '" + excerpt(table.header[i]) + "' appears twice");
  }
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].fields.size() != table.header.size())
      parser.fail(records[r].line,
                  fmt::format("has {} fields, the header has {}", records[r].fields.size(), table.header.size()));
    table.records.push_back(std::move(records[r]));
  }
  return table;
}

}  // namespace commbench
