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

TEST(FormatSize, SizesThatWouldReadAlikeAreWrittenInBytes) {
  // 2949120 and 2960000 bytes both round to 2.8MiB; the same size twice stays as it reads.
  EXPECT_EQ(format_sizes_apart({2949120, 1024, 2960000, 1024, 3ull << 20}),
            (std::vector<std::string>{"2949120B", "1KiB", "2960000B", "1KiB", "3MiB"}));
  // A little over 1 MiB prints as 1.0MiB, which reads as 1MiB does.
  EXPECT_EQ(format_sizes_apart({1048832, 1048576, 512 * 1024}),
            (std::vector<std::string>{"1048832B", "1048576B", "512KiB"}));
  EXPECT_EQ(format_sizes_apart({1048832}), (std::vector<std::string>{"1.0MiB"}));
  EXPECT_TRUE(format_sizes_apart({}).empty());
}

}  // namespace
}  // namespace commbench
