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

// A time said to people: the unit that keeps it short, never an exponent.
TEST(NumberText, DurationsInTheUnitThatFits) {
  EXPECT_EQ(duration_text(0.00042), "420.0 us");
  EXPECT_EQ(duration_text(0.000001234), "1.23 us");
  EXPECT_EQ(duration_text(0.85), "850 ms");
  EXPECT_EQ(duration_text(0.99971), "1 s");
  EXPECT_EQ(duration_text(12.34), "12.3 s");
  EXPECT_EQ(duration_text(99.99), "1 min 40 s");
  EXPECT_EQ(duration_text(245), "4 min 05 s");
  EXPECT_EQ(duration_text(7380), "2 h 03 min");
  EXPECT_EQ(duration_text(-1), "? s");
}

// Milliseconds in a column that says "ms": whole ones past the digits, never 1.304e+04.
TEST(NumberText, MillisecondsWithoutExponents) {
  EXPECT_EQ(milliseconds_text(13040.4, 4), "13040");
  EXPECT_EQ(milliseconds_text(9999.7, 4), "10000");
  EXPECT_EQ(milliseconds_text(2.2468, 4), "2.247");
  EXPECT_EQ(milliseconds_text(0.00001234, 4), "0.0000");
  EXPECT_EQ(milliseconds_text(0, 4), "0");
}

}  // namespace
}  // namespace commbench
