#include "commbench/core/collective.hpp"

#include <algorithm>
#include <string>

#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

std::vector<Collective> collectives_in_op_all() {
  std::vector<Collective> ops;
  for (const CollectiveDescriptor& d : collective_descriptors())
    if (d.in_op_all) ops.push_back(d.op);
  return ops;
}

// The names --op accepts: every collective's name and its alias.
const std::vector<detail::NamedValue<Collective>>& accepted_names() {
  static const std::vector<detail::NamedValue<Collective>> names = [] {
    std::vector<detail::NamedValue<Collective>> all;
    for (const CollectiveDescriptor& d : collective_descriptors()) {
      all.push_back({d.name, d.op});
      if (!d.alias.empty()) all.push_back({d.alias, d.op});
    }
    return all;
  }();
  return names;
}

// Every collective, alltoallv included (--op all leaves some out: all_collectives()).
std::span<const Collective> every_collective() {
  static const std::vector<Collective> every = [] {
    std::vector<Collective> ops;
    for (const CollectiveDescriptor& d : collective_descriptors()) ops.push_back(d.op);
    return ops;
  }();
  return every;
}

std::uint64_t elements_in(Chunks chunks, std::uint64_t count, std::uint64_t ranks) {
  return chunks == Chunks::per_rank ? count * ranks : count;
}

}  // namespace

std::span<const Collective> all_collectives() {
  static const std::vector<Collective> ops = collectives_in_op_all();
  return ops;
}

std::string_view name_of(Collective op) { return descriptor_of(op).name; }

Collective parse_collective(std::string_view text, std::string_view flag) {
  return detail::lookup_name<Collective>(accepted_names(), text, flag,
                                         detail::canonical_names<Collective>(every_collective()));
}

std::string accepted_collective_names() {
  return detail::accepted_names<Collective>(every_collective(), accepted_names());
}

std::vector<Collective> parse_collective_list(std::string_view text, std::string_view flag) {
  return detail::parse_list<Collective>(text, flag, all_collectives(), parse_collective);
}

bool reduces(Collective op) { return descriptor_of(op).reduces; }

bool has_root(Collective op) { return descriptor_of(op).rooted; }

double bus_bandwidth_factor(Collective op, int ranks) { return descriptor_of(op).bus_bandwidth_factor(ranks); }

BufferShape shape_for(Collective op, std::uint64_t requested_bytes, std::size_t element_size, int ranks,
                      const PeerDistribution& distribution) {
  const CollectiveDescriptor& d = descriptor_of(op);
  const std::uint64_t n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t chunks = d.chunked() ? n : 1;
  const std::uint64_t count = std::max<std::uint64_t>(1, requested_bytes / element_size / chunks);
  BufferShape shape;
  shape.count = count;
  shape.bytes = count * chunks * element_size;
  shape.send_elements = elements_in(d.send_chunks, count, n);
  shape.recv_elements = elements_in(d.receive_chunks, count, n);
  if (d.split_per_peer()) shape.recv_elements = most_received(distribution, shape.send_elements, ranks);
  return shape;
}

}  // namespace commbench
