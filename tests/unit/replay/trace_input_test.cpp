// A trace file read as a stream: plain or gzip by its first bytes, members one after
// another, what follows a member ignored as gzip does, and a damaged or cut stream failing
// at the byte of text it reached, with that text handed out first.
#include "trace_input.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "temp_dir.hpp"
#include "usage_error.hpp"

namespace commbench {
namespace {

using testing::TempDir;

std::string gzip(const std::string& text) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, text.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// Every byte of `path`'s text, read in pieces of `piece` bytes, and how it ended.
struct Reading {
  std::string text;
  std::string error;
  std::uint64_t offset = 0;
  bool compressed = false;
};

Reading read_all(const std::string& path, std::size_t piece = 7) {
  TraceInput input(path);
  Reading reading;
  std::string buffer(piece, '\0');
  for (std::size_t got; (got = input.read(buffer.data(), buffer.size())) > 0;) reading.text.append(buffer, 0, got);
  reading.error = input.error();
  reading.offset = input.offset();
  reading.compressed = input.compressed();
  return reading;
}

// Text that does not compress to nothing: a damaged byte then lands inside the data.
std::string sample_text() {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919 % 10007) + (i % 13 == 0 ? "\n" : ",");
  return text;
}

TEST(TraceInput, PlainAndGzipAreToldApartByTheirFirstBytes) {
  TempDir dir;
  const std::string text = sample_text();
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 20}) {
    const Reading plain = read_all(dir.write("a.json.gz", text), piece);  // the name does not decide
    EXPECT_FALSE(plain.compressed);
    EXPECT_EQ(plain.text, text);
    const Reading packed = read_all(dir.write("a.json", gzip(text)), piece);
    EXPECT_TRUE(packed.compressed);
    EXPECT_EQ(packed.text, text);
    EXPECT_EQ(packed.offset, text.size());
    EXPECT_EQ(packed.error, "");
  }
  EXPECT_EQ(read_all(dir.write("one.json", "{")).text, "{");
  EXPECT_EQ(read_all(dir.write("empty.json", "")).text, "");
}

TEST(TraceInput, MembersFollowOneAnotherAndWhatFollowsIsIgnored) {
  TempDir dir;
  EXPECT_EQ(read_all(dir.write("two.gz", gzip("{\"a\": ") + gzip("1}"))).text, "{\"a\": 1}");
  const Reading trailing = read_all(dir.write("trailing.gz", gzip("{}") + std::string(3, '\0')));
  EXPECT_EQ(trailing.text, "{}");
  EXPECT_EQ(trailing.error, "");
}

TEST(TraceInput, ADamagedOrCutStreamFailsAtTheByteOfTextItReached) {
  TempDir dir;
  const std::string text = sample_text();
  const std::string packed = gzip(text);
  std::string bad_check = packed;
  bad_check[bad_check.size() - 6] ^= 0x5a;  // the CRC in the trailer: all the text decodes first
  const Reading checked = read_all(dir.write("check.gz", bad_check), 4096);
  EXPECT_EQ(checked.error, "incorrect data check");
  EXPECT_EQ(checked.text, text);
  EXPECT_EQ(checked.offset, text.size());
  const Reading cut = read_all(dir.write("cut.gz", packed.substr(0, packed.size() / 2)), 1 << 20);
  EXPECT_EQ(cut.error, "unexpected end of file");
  EXPECT_GT(cut.offset, 0u);
  EXPECT_EQ(cut.text, text.substr(0, cut.offset));
  std::string bad_data = packed;
  bad_data[packed.size() / 2] ^= 0xff;
  const Reading damaged = read_all(dir.write("damaged.gz", bad_data), 1 << 20);
  EXPECT_NE(damaged.error, "");
  EXPECT_EQ(damaged.offset, damaged.text.size());
  EXPECT_EQ(testing::usage_error_of([&] { TraceInput input(dir.path("none.gz")); }),
            dir.path("none.gz") + ": cannot read (No such file or directory)");
}

}  // namespace
}  // namespace commbench
