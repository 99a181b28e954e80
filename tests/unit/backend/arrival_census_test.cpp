#include "commbench/backend/arrival_census.hpp"

#include <gtest/gtest.h>

namespace commbench {
namespace {

TEST(ArrivalBoard, NamesTheRanksThatHaveNotArrived) {
  ArrivalBoard board;
  EXPECT_EQ(board.describe(), "");  // no census open: nothing to add to a timeout line
  board.open("joining the job's ranks", 4, {});
  board.mark_arrived(2);
  EXPECT_EQ(board.describe(), "not arrived at joining the job's ranks: rank 1 (host unknown), rank 3 (host unknown)");
  board.mark_arrived(1);
  board.mark_arrived(3);
  EXPECT_EQ(board.describe(), "every rank arrived at joining the job's ranks");
  board.close();
  EXPECT_EQ(board.describe(), "");
}

TEST(ArrivalBoard, NamesHostsOnceKnownAndCutsLongLists) {
  ArrivalBoard board;
  board.open("opening the heartbeat channel", 3, {"n0", "n1", "n2"});
  board.mark_arrived(1);
  EXPECT_EQ(board.describe(), "not arrived at opening the heartbeat channel: rank 2 (host n2)");
  board.open("x", 20, {});
  board.mark_arrived(99);  // out of range: ignored
  const std::string text = board.describe();
  EXPECT_NE(text.find("rank 8 (host unknown) and 11 more"), std::string::npos) << text;
  EXPECT_EQ(text.find("rank 9 "), std::string::npos) << text;
}

}  // namespace
}  // namespace commbench
