// CSV as commbench writes it (RFC 4180: comma-separated; a field holding a comma, quote
// or line break is quoted, with quotes doubled), read back strictly: a malformed file is
// an error naming the file and line, never a partly read table.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

struct CsvRecord {
  std::size_t line = 0;  // where the record starts, counting from 1
  std::vector<std::string> fields;
};

struct CsvTable {
  std::vector<std::string> header;
  std::vector<CsvRecord> records;

  std::optional<std::size_t> column(std::string_view name) const;
};

// Parses `text`; `origin` names it in errors ("--baseline runs/a.csv"), which read
// "ORIGIN line N: what is wrong". LF and CRLF line ends are accepted, blank lines
// skipped, and so are lines starting with '#' before the header (a run under Slurm
// writes its "# slurm: ..." line there). Every record must have as many fields as the header; header names must be
// non-empty and distinct.
CsvTable parse_csv(std::string_view text, const std::string& origin);

}  // namespace commbench
