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
