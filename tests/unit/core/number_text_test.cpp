#include "commbench/core/number_text.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

namespace commbench {
namespace {

std::string printf_text(const char* format, double value) {
  char text[512];  // %.2f of 1e300 has 303 characters
  std::snprintf(text, sizeof text, format, value);
  return text;
}

TEST(NumberText, SignificantDigits) {
  EXPECT_EQ(significant_text(370.83, 4), "370.8");
  EXPECT_EQ(significant_text(400, 4), "400");
  EXPECT_EQ(significant_text(3.145728), "3.14573");
  EXPECT_EQ(significant_text(1e-7), "1e-07");
  EXPECT_EQ(significant_text(123456789.0, 9), "123456789");
}

TEST(NumberText, FixedWithinAWidthDropsDecimalsThenTakesAnExponent) {
  EXPECT_EQ(fixed_text_within(2.097152, 3, 9), "2.097");  // fits: as fixed_text
  EXPECT_EQ(fixed_text_within(12345.6789, 3, 9), "12345.679");
  EXPECT_EQ(fixed_text_within(123456.6789, 3, 9), "123456.68");
  EXPECT_EQ(fixed_text_within(12334394.773, 3, 9), "12334395");
  EXPECT_EQ(fixed_text_within(1.5e12, 3, 9), "1.50e+12");
  EXPECT_EQ(fixed_text_within(1.5e12, 3, 5), "2e+12");
  for (double value : {0.0, 1.0, 9.99e8, 1e9, 3.4e38, 1e300})
    EXPECT_LE(fixed_text_within(value, 3, 9).size(), 9u) << value;
}

TEST(NumberText, CountsTakeTheNounsNumber) {
  EXPECT_EQ(count_text(1, "node"), "1 node");
  EXPECT_EQ(count_text(0, "node"), "0 nodes");
  EXPECT_EQ(count_text(3, "step"), "3 steps");
  EXPECT_EQ(count_text(1, "process", "processes"), "1 process");
  EXPECT_EQ(count_text(2, "process", "processes"), "2 processes");
}

TEST(NumberText, FixedDecimals) {
  EXPECT_EQ(fixed_text(2.097152, 3), "2.097");
  EXPECT_EQ(fixed_text(500, 2), "500.00");
  EXPECT_EQ(fixed_text(1.5, 1), "1.5");
}

// Tables and tests were written against printf's rounding; the two must agree digit for
// digit, halfway cases and extremes included.
TEST(NumberText, RoundsAsPrintfDoes) {
  const double values[] = {0.0,   -0.0,      0.005,    0.015,      0.125,
                           2.5,   99999.995, 1e21,     1e-5,       1e-300,
                           1e300, -1.25,     370.8375, 63.0153846, std::numeric_limits<double>::infinity()};
  for (const double value : values) {
    EXPECT_EQ(significant_text(value, 4), printf_text("%.4g", value)) << value;
    EXPECT_EQ(significant_text(value), printf_text("%g", value)) << value;
    EXPECT_EQ(significant_text(value, 9), printf_text("%.9g", value)) << value;
    EXPECT_EQ(fixed_text(value, 2), printf_text("%.2f", value)) << value;
    EXPECT_EQ(fixed_text(value, 1), printf_text("%.1f", value)) << value;
  }
}

}  // namespace
}  // namespace commbench
