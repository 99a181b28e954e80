#include <gtest/gtest.h>

#include "commbench/core/error.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

TEST(ParseSize, PlainAndBinarySuffixes) {
  EXPECT_EQ(parse_size("8", "-b"), 8u);
  EXPECT_EQ(parse_size("64K", "-b"), 65536u);
  EXPECT_EQ(parse_size("64k", "-b"), 65536u);
  EXPECT_EQ(parse_size("1M", "-b"), 1048576u);
  EXPECT_EQ(parse_size("2G", "-b"), 2147483648u);
  EXPECT_EQ(parse_size("1T", "-b"), 1099511627776u);
  EXPECT_EQ(parse_size("4KiB", "-b"), 4096u);
  EXPECT_EQ(parse_size("4MB", "-b"), 4194304u);
  EXPECT_EQ(parse_size("128B", "-b"), 128u);
  EXPECT_EQ(parse_size(" 16 ", "-b"), 16u);
}

// Each bad value must throw a UsageError whose message names the flag and the value.
void expect_rejected(const char* text, const char* why) {
  try {
    parse_size(text, "-e/--max-bytes");
    FAIL() << "accepted '" << text << "'";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("-e/--max-bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "must be one line: " << message;
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
  }
}

TEST(ParseSize, RejectsBadValuesNamingTheFlag) {
  expect_rejected("", "empty");
  expect_rejected("-1", "negative");
  expect_rejected("-4K", "negative");
  expect_rejected("0", "zero");
  expect_rejected("0K", "zero");
  expect_rejected("abc", "not a size");
  expect_rejected("12Q", "unknown unit");
  expect_rejected("4KK", "unknown unit");
  expect_rejected("99999999999999999999", "too large");  // > 2^64
  expect_rejected("16777216T", "too large");             // 2^24 * 2^40 = 2^64
}

TEST(ParseSize, AFractionIsNamedWithTheWholeNumberToWrite) {
  expect_rejected("1.5M", "has a fraction; sizes are whole numbers of bytes or units: write 1536K");
  expect_rejected("2.25G", "write 2304M");
  expect_rejected("1.5K", "write 1536");
  expect_rejected("0.1M", "has a fraction; sizes are whole numbers of bytes or units (K, M, G, T)");
  expect_rejected("1.5", "has a fraction");
}

TEST(ParseSize, ControlCharactersInTheInputStayOnOneLine) {
  // Found by fuzz/parse_size_fuzzer.cpp: the message quotes the input.
  try {
    parse_size("664K4\xff\n", "-b/--min-bytes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "-b/--min-bytes: '664K4\xff\\n' has an unknown unit; use K, M, G or T (binary: 1K = 1024)");
  }
  EXPECT_EQ(one_line("a\tb\x1b[31m\r\n"), "a\\tb\\x1b[31m\\r\\n");
}

TEST(FormatSize, ExactPowersAndFractions) {
  EXPECT_EQ(format_size(8), "8B");
  EXPECT_EQ(format_size(1024), "1KiB");
  EXPECT_EQ(format_size(64ull << 20), "64MiB");
  EXPECT_EQ(format_size(3ull << 30), "3GiB");
  EXPECT_EQ(format_size(1536), "1.5KiB");
  EXPECT_EQ(format_size(1000), "1000B");
}

}  // namespace
}  // namespace commbench
