// Plain-text tables for the console: the bench-collectives table, the topology matrix,
// the NIC table and the theoretical busbw table are all built from columns of a heading,
// an alignment and a width, so no caller keeps widths or padding by hand.
//
// Cells wider than their column push the rest of the line to the right, as printf's
// "%14s" does; the tables people already parse keep their exact layout that way. Widths
// count bytes, as printf does, so a name with non-ASCII bytes pads as it always has.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace commbench {

enum class Align { left, right };

struct TextColumn {
  // One entry per heading line ("time", "(us)"); a column with fewer lines is blank below.
  std::vector<std::string> heading;
  Align align = Align::left;
  // The least width of the column's cells; none: the widest of heading and cells, which
  // only render() can know (a table printed row by row needs fixed widths).
  std::optional<std::size_t> width;
  // Spaces before this column; the first column starts right after the line's prefix.
  std::size_t gap = 1;
};

class TextTable {
 public:
  // `heading_prefix` and `row_prefix` start every heading and every row line ("#" marks
  // the heading of the bench-collectives table as a comment for tools reading it).
  explicit TextTable(std::vector<TextColumn> columns, std::string heading_prefix = "", std::string row_prefix = "");

  // The heading lines, each ending in a newline; nothing when no column has a heading.
  std::string heading() const;
  // One row, ending in a newline, with the columns' fixed widths: for tables printed as
  // their rows arrive. Missing cells are blank.
  std::string line(const std::vector<std::string>& cells) const;

  void add_row(std::vector<std::string> cells);
  // Heading and every added row, with open widths fitted to their widest cell.
  std::string render() const;

 private:
  std::string format_line(const std::string& prefix, const std::vector<std::string>& cells,
                          const std::vector<std::size_t>& widths) const;
  std::string heading_with(const std::vector<std::size_t>& widths) const;
  std::vector<std::string> heading_cells(std::size_t line_index) const;
  std::size_t heading_lines() const;
  std::vector<std::size_t> fixed_widths() const;

  std::vector<TextColumn> columns_;
  std::string heading_prefix_;
  std::string row_prefix_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace commbench
