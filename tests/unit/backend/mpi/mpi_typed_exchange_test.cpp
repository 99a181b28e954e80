// The typed exchange between real MPI processes (run under mpirun with 1, 2 and 4 ranks):
// every rank's struct, its optional and nested fields included, arrives whole on every
// rank, and a root's value reaches all. Every test is collective.
#include <gtest/gtest.h>
#include <mpi.h>

#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "commbench/backend/mpi/mpi_bootstrap.hpp"
#include "commbench/backend/typed_exchange.hpp"

namespace commbench {
namespace {

struct Port {
  std::string name;
  std::optional<std::uint64_t> bytes;
  bool operator==(const Port&) const = default;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, Port>
void fields(Self& p, Visit& v) {
  v("name", p.name);
  v("bytes", p.bytes);
}

struct RankReport {
  int rank = 0;
  double seconds = 0;
  std::vector<Port> ports;
  std::vector<std::string> lines;
  bool operator==(const RankReport&) const = default;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, RankReport>
void fields(Self& r, Visit& v) {
  v("rank", r.rank);
  v("seconds", r.seconds);
  v("ports", r.ports);
  v("lines", r.lines);
}

// Ranks differ in what they send: odd ranks send no ports and no counts, so lengths and
// absent values differ across the group, as a node's sampling rank and its others do.
RankReport report_of(int rank) {
  RankReport report{rank, 1.0 / (rank + 3), {}, {}};
  if (rank % 2 == 0)
    report.ports = {{"mlx5_" + std::to_string(rank), std::uint64_t{1} << (40 + rank)}, {"eth0", std::nullopt}};
  for (int line = 0; line < rank; ++line) report.lines.push_back(std::string(static_cast<std::size_t>(line), ','));
  return report;
}

TEST(MpiTypedExchange, EveryRanksStructArrivesWholeOnEveryRank) {
  mpi::MpiBootstrap g(MPI_COMM_WORLD);
  const std::vector<RankReport> gathered = all_gather_as(g, report_of(g.rank()));
  ASSERT_EQ(gathered.size(), static_cast<std::size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r) EXPECT_EQ(gathered[static_cast<std::size_t>(r)], report_of(r)) << "rank " << r;
  const std::optional<RankReport> mine = g.rank() % 2 == 0 ? std::optional(report_of(g.rank())) : std::nullopt;
  const std::vector<std::optional<RankReport>> some = all_gather_as(g, mine);
  ASSERT_EQ(some.size(), static_cast<std::size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r)
    EXPECT_EQ(some[static_cast<std::size_t>(r)], r % 2 == 0 ? std::optional(report_of(r)) : std::nullopt);
}

TEST(MpiTypedExchange, TheRootsValueReachesEveryRank) {
  mpi::MpiBootstrap g(MPI_COMM_WORLD);
  const int last = g.size() - 1;
  // The others' values must not be read: they send a different one.
  EXPECT_EQ(broadcast_as(g, report_of(g.rank()), last), report_of(last));
  const std::optional<double> predicted = g.rank() == 0 ? std::optional(0.1 + 0.2) : std::nullopt;
  EXPECT_EQ(broadcast_as(g, predicted, 0), std::optional(0.1 + 0.2));
  EXPECT_EQ(broadcast_as(g, std::optional<double>(), 0), std::nullopt);
}

}  // namespace
}  // namespace commbench
