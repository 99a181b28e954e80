// What bench-p2p measured, one cell per ordered pair and direction, and how it is read:
// outliers against the matrix's median and the link's spec, slow ranks told from slow
// links, the console matrices and the long-form CSV. Pure: no communication.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "commbench/core/record.hpp"
#include "commbench/p2p/pair_schedule.hpp"

namespace commbench {

struct PairCell {
  int src_rank = 0;
  int dst_rank = 0;
  std::string src_host, dst_host;
  std::string src_device, dst_device;  // "GPU 0000:1b:00.0", or "host" for host memory
  std::uint64_t bytes = 0;
  PairDirection direction = PairDirection::forward;
  int round = 0;
  std::optional<int> rail;  // --per-rail: both ranks' place on their node
  // How it moved: "send/recv" between ranks; inside a node (--local) "copy-engine", "sm-copy"
  // or "nccl" between GPUs, "pinned-near", "pinned-far" or "pageable" between host and GPU.
  std::string method = "send/recv";
  double gbps = 0;                         // bytes per second of this direction, in GB/s
  std::optional<double> latency_us;        // the pair's small-message exchange time
  std::optional<double> theoretical_gbps;  // spec of the link between them (bandwidth model)
  std::optional<double> efficiency;        // gbps / theoretical_gbps
  std::string link;                        // the model's description of that link, or why unknown
  bool flagged = false;
  std::string flag_reason;
  // Across nodes: what each end's NICs carried while the cell's direction ran ("cb-node1
  // eth0 0.61 GB/s (busiest 1.2 GB/s); cb-node3 eth0 0.02 GB/s (busiest 0.03 GB/s), short");
  // empty inside a node or where the NICs were not read.
  std::string nics;
};

// Its fields, for the exchange between ranks (backend/typed_exchange.hpp).
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, PairCell>
void fields(Self& c, Visit& v) {
  v("src_rank", c.src_rank);
  v("dst_rank", c.dst_rank);
  v("src_host", c.src_host);
  v("dst_host", c.dst_host);
  v("src_device", c.src_device);
  v("dst_device", c.dst_device);
  v("bytes", c.bytes);
  v("direction", c.direction);
  v("round", c.round);
  v("rail", c.rail);
  v("method", c.method);
  v("gbps", c.gbps);
  v("latency_us", c.latency_us);
  v("theoretical_gbps", c.theoretical_gbps);
  v("efficiency", c.efficiency);
  v("link", c.link);
  v("flagged", c.flagged);
  v("reason", c.flag_reason);
  v("nics", c.nics);
}

// A cell is an outlier when its bandwidth is below `fraction` of the ranks' median (over
// ranks, of each rank's median cell, among cells measured the same way: the same method,
// one direction at a time or both at once, host or GPU at each end), or below `fraction`
// of its link's spec where the model knows it. Inside a node an endpoint is a device,
// not a rank: the median is over GPUs. The ranks' median stays with the healthy majority while fewer than half the
// ranks are slow. 0.7: a healthy link of a matrix of equal links reads within a few percent of its peers, and a link
// that lost a lane, runs at a lower PCIe generation or shares a NIC reads at 50 % or less.
constexpr double kDefaultOutlierFraction = 0.7;
void flag_outliers(std::vector<PairCell>& cells, double fraction);

// Whether a cell's spec is a verdict, not only a figure to read it by. Inside a node
// (--local) a both-ways cell is read against its peers only: its link's spec is a one-way
// figure, both directions at once share the link with each other's requests and
// completions, and the same link's one-way cell, measured beside it, carries the spec
// verdict. A healthy link both ways at once reads near 70 % of its one-way spec, which the
// 0.7 fraction would flag (results/gpu/h100-80gb-hbm3/2026-11-26-60722e7/p2p-local.txt).
// Between ranks, --both-ways replaces the one-way cells, so there the spec still judges
// them.
bool read_against_spec(const PairCell& cell);

// Whether a cell moved between two peers (two ranks, or two GPUs of one node), not between
// a GPU and its host's memory: what the square matrices show.
bool between_peers(const PairCell& cell);

// Ranks every one of whose cells (as sender or receiver, with at least two different
// partners) is flagged: a slow rank or node, not a slow link. Sorted.
std::vector<int> slow_ranks(const std::vector<PairCell>& cells);

// Inside a node (--local): the GPUs (host, device) every one of whose transfers with other
// GPUs, by every method, with at least two partners, is flagged: a slow GPU or its link,
// not one slow pair. Sorted.
std::vector<std::pair<std::string, std::string>> slow_devices(const std::vector<PairCell>& cells);

// A ranks × ranks table of the cells' bandwidth (rows send, columns receive; "-" where
// no cell was measured, a trailing '!' on an outlier). Latency instead when `latency`.
std::string matrix_text(const std::vector<PairCell>& cells, int ranks, bool latency);
// The same table over one node's devices (--local): row and column i are `devices[i]`.
std::string device_matrix_text(const std::vector<PairCell>& cells, const std::vector<std::string>& devices,
                               bool latency);

// What the matrices show, one line each: "no outlier among N cells", or a SLOW RANK line
// per slow rank (with its rail under --per-rail: that rail's NIC or cable), a SLOW line per
// slow GPU of a node (slow_devices), and an OUTLIER line per flagged cell with both hosts,
// devices, the method inside a node, the reason and the link.
std::string findings_text(const std::vector<PairCell>& cells, const std::vector<int>& slow);

// "one-way" (measured alone; src and dst say which way) or "both" (while the pair also
// sent the other way): the direction column of the CSV and JSON.
std::string_view direction_text(const PairCell& cell);

// The long-form CSV, one line per cell (header first); `method` is the last column.
std::string cells_csv(const std::vector<PairCell>& cells);
// A cell as a record of kind "cell" (core/record.hpp): what --csv and --json hold.
Record cell_record(const PairCell& cell);

}  // namespace commbench
