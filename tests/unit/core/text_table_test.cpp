#include "commbench/core/text_table.hpp"

#include <gtest/gtest.h>

namespace commbench {
namespace {

TEST(TextTable, FixedWidthsAlignAndLetWideCellsPushRight) {
  const TextTable table({{{"op"}, Align::right, 6}, {{"size", "(B)"}, Align::left, 5}, {{"note"}, Align::left, 0, 2}},
                        "#", " ");
  EXPECT_EQ(table.heading(), "#    op size   note\n#       (B)    \n");
  EXPECT_EQ(table.line({"bcast", "8", "ok"}), "  bcast 8      ok\n");
  // Wider than the column: the line grows, as printf's "%6s" would.
  EXPECT_EQ(table.line({"allreduce", "1048576", "x"}), " allreduce 1048576  x\n");
  EXPECT_EQ(table.line({"a"}), "      a        \n");  // missing cells are blank
}

TEST(TextTable, OpenWidthsFitTheWidestCellOrHeading) {
  TextTable table({{{"name"}, Align::left, std::nullopt}, {{"n"}, Align::right, std::nullopt}});
  table.add_row({"mlx5_10", "7"});
  table.add_row({"eno1", "1234"});
  EXPECT_EQ(table.render(), "name       n\nmlx5_10    7\neno1    1234\n");
}

TEST(TextTable, WidthsCountBytesAsPrintfDoes) {
  // "\xc3\xa9" is one character in two bytes: padded to 4 bytes, not 4 characters.
  const TextTable table({{{"x"}, Align::left, 4}, {{"y"}, Align::left, 0}});
  EXPECT_EQ(table.line({"\xc3\xa9", "z"}), "\xc3\xa9   z\n");
}

TEST(TextTable, NoHeadingNoHeadingLines) {
  TextTable table({{{}, Align::left, 3}});
  table.add_row({"a"});
  EXPECT_EQ(table.heading(), "");
  EXPECT_EQ(table.render(), "a  \n");
}

}  // namespace
}  // namespace commbench
