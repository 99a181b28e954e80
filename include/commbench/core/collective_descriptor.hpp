// Everything commbench knows about one collective, in one place: how a size maps onto its
// buffers, its busbw factor, where it reads and writes when it runs in place, whether it
// reduces or has a root, what --check expects of it and which traffic pattern the
// bandwidth model assumes. Backends keep only their own calls, one entry per collective.
// (nccl-tests spreads the same knowledge over a struct of function pointers per test.)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "commbench/core/check_rule.hpp"
#include "commbench/core/collective.hpp"

namespace commbench {

// How many count-sized chunks a buffer of one rank holds.
enum class Chunks {
  one,            // count elements
  per_rank,       // count x ranks elements
  by_peer_split,  // what the peers send this rank under the --alltoallv-distribution
};

// busbw = algbw x factor (nccl-tests convention, n = ranks).
enum class BusFactor {
  twice_ring,  // 2(n-1)/n: a ring reduce-scatter then a ring all-gather
  ring,        // (n-1)/n: every rank's data crosses the bus once, except its own share
  one,         // 1: the whole size crosses one link
};

// Where one rank's input (before) or output (after) lives when the collective runs in place,
// in nccl-tests' conventions (a backend whose library differs says so in its call table).
enum class InPlaceRegion {
  none,                  // no in-place form (no_in_place_reason says why)
  whole_receive_buffer,  // the whole receive buffer
  own_chunk_of_receive,  // chunk `rank` of the receive buffer (count elements)
};

// The links the bandwidth model bounds busbw by (topology/bandwidth_model.cpp).
enum class BusTraffic {
  ring,            // every rank sends and receives at the bus rate over a ring
  all_pairs,       // every rank sends to every other: node-local and cross-node shares
  neighbour_pair,  // one flow between neighbouring ranks
};

struct CollectiveDescriptor {
  Collective op;
  std::string_view name;   // the op column and --op
  std::string_view alias;  // the nccl-tests / PyTorch spelling --op also accepts; empty if none
  bool in_op_all;          // part of --op all
  Chunks send_chunks;
  Chunks receive_chunks;
  BusFactor bus_factor;
  bool reduces;  // takes -o/--redop
  bool rooted;   // takes -r/--root
  InPlaceRegion in_place_input;
  InPlaceRegion in_place_output;
  CheckRule check_rule;
  BusTraffic traffic;
  std::string_view no_in_place_reason = {};  // why there is no in-place form (in_place_* == none)

  // Whether a buffer holds one chunk per rank, so the size column (nccl-tests' "size", the
  // larger buffer of one rank) is n chunks and rounds to whole chunks.
  bool chunked() const { return send_chunks != Chunks::one || receive_chunks != Chunks::one; }
  // Whether the counts differ per peer (alltoallv): backends then take them from peer_counts().
  bool split_per_peer() const { return receive_chunks == Chunks::by_peer_split; }
  double bus_bandwidth_factor(int ranks) const;
};

const CollectiveDescriptor& descriptor_of(Collective op);
// "in-place alltoallv: ..." for a collective without an in-place form, for every backend.
std::optional<std::string> missing_in_place_form(Collective op);
std::span<const CollectiveDescriptor> collective_descriptors();

}  // namespace commbench
