#include "commbench/core/text_table.hpp"

#include <algorithm>

namespace commbench {

TextTable::TextTable(std::vector<TextColumn> columns, std::string heading_prefix, std::string row_prefix)
    : columns_(std::move(columns)), heading_prefix_(std::move(heading_prefix)), row_prefix_(std::move(row_prefix)) {}

std::size_t TextTable::heading_lines() const {
  std::size_t lines = 0;
  for (const TextColumn& column : columns_) lines = std::max(lines, column.heading.size());
  return lines;
}

std::vector<std::string> TextTable::heading_cells(std::size_t line_index) const {
  std::vector<std::string> cells;
  for (const TextColumn& column : columns_)
    cells.push_back(line_index < column.heading.size() ? column.heading[line_index] : std::string());
  return cells;
}

std::vector<std::size_t> TextTable::fixed_widths() const {
  std::vector<std::size_t> widths;
  for (const TextColumn& column : columns_) widths.push_back(column.width.value_or(0));
  return widths;
}

std::string TextTable::format_line(const std::string& prefix, const std::vector<std::string>& cells,
                                   const std::vector<std::size_t>& widths) const {
  std::string text = prefix;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) text.append(columns_[c].gap, ' ');
    const std::string empty;
    const std::string& cell = c < cells.size() ? cells[c] : empty;
    const std::size_t padding = widths[c] > cell.size() ? widths[c] - cell.size() : 0;
    if (columns_[c].align == Align::right) text.append(padding, ' ');
    text += cell;
    if (columns_[c].align == Align::left) text.append(padding, ' ');
  }
  return text + "\n";
}

std::string TextTable::heading_with(const std::vector<std::size_t>& widths) const {
  std::string text;
  for (std::size_t l = 0; l < heading_lines(); ++l) text += format_line(heading_prefix_, heading_cells(l), widths);
  return text;
}

std::string TextTable::heading() const { return heading_with(fixed_widths()); }

std::string TextTable::line(const std::vector<std::string>& cells) const {
  return format_line(row_prefix_, cells, fixed_widths());
}

void TextTable::add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

std::string TextTable::render() const {
  std::vector<std::size_t> widths = fixed_widths();
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c].width) continue;
    for (const std::string& heading : columns_[c].heading) widths[c] = std::max(widths[c], heading.size());
    for (const auto& row : rows_)
      if (c < row.size()) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text = heading_with(widths);
  for (const auto& row : rows_) text += format_line(row_prefix_, row, widths);
  return text;
}

}  // namespace commbench
