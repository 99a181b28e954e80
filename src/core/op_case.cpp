#include "commbench/core/op_case.hpp"

#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/name_lookup.hpp"
#include "commbench/core/size.hpp"

namespace commbench {

std::string_view name_of(Placement placement) { return placement == Placement::in_place ? "in" : "out"; }

std::vector<Placement> parse_placements(std::string_view text, std::string_view flag) {
  const std::string value = detail::lower_case(text);
  if (value == "out") return {Placement::out_of_place};
  if (value == "in") return {Placement::in_place};
  if (value == "both") return {Placement::out_of_place, Placement::in_place};
  throw UsageError(std::string(flag) + ": unknown value '" + std::string(text) + "'; expected one of: out, in, both");
}

std::string describe(const OpCase& c) {
  std::string text =
      std::string(name_of(c.op)) + " " + format_size(c.shape.bytes) + " " + std::string(name_of(c.dtype));
  if (c.redop != ReduceOp::none) {
    text += ' ';
    text += name_of(c.redop);
  }
  if (c.root >= 0) {
    text += " root ";
    text += std::to_string(c.root);
  }
  if (descriptor_of(c.op).split_per_peer()) {
    text += ' ';
    text += to_string(c.distribution);
  }
  text += c.placement == Placement::in_place ? " in-place" : " out-of-place";
  return text;
}

std::string op_label(const OpCase& c) {
  const std::string name(name_of(c.op));
  if (!descriptor_of(c.op).split_per_peer()) return name;
  return name + "(" + to_string(c.distribution) + ")";
}

OpLabel parse_op_label(std::string_view text, std::string_view where) {
  const std::size_t open = text.find('(');
  OpLabel label;
  label.op = parse_collective(text.substr(0, open), where);
  const bool split = descriptor_of(label.op).split_per_peer();
  if (open == std::string_view::npos) {
    if (split)
      throw UsageError(std::string(where) + ": '" + one_line(excerpt(text)) + "' lacks its distribution, e.g. " +
                       std::string(name_of(label.op)) + "(uniform)");
    return label;
  }
  if (!split || text.back() != ')')
    throw UsageError(std::string(where) + ": '" + one_line(excerpt(text)) + "' is not a collective name");
  label.distribution = parse_peer_distribution(text.substr(open + 1, text.size() - open - 2), where);
  return label;
}

std::vector<OpCase> build_plan(const PlanRequest& request) {
  std::vector<OpCase> plan;
  for (Collective op : request.ops) {
    const std::vector<ReduceOp> redops = reduces(op) ? request.redops : std::vector<ReduceOp>{ReduceOp::none};
    const PeerDistribution distribution =
        descriptor_of(op).split_per_peer() ? request.alltoallv_distribution : PeerDistribution{};
    for (DataType dtype : request.dtypes) {
      for (ReduceOp redop : redops) {
        std::uint64_t previous_bytes = 0;
        for (std::uint64_t size : request.sizes) {
          const BufferShape shape = shape_for(op, size, size_of(dtype), request.ranks, distribution);
          if (shape.bytes == previous_bytes) continue;
          previous_bytes = shape.bytes;
          for (Placement placement : request.placements) {
            OpCase c;
            c.op = op;
            c.dtype = dtype;
            c.redop = redop;
            c.root = has_root(op) ? request.root : -1;
            c.placement = placement;
            c.distribution = distribution;
            c.shape = shape;
            c.requested_bytes = size;
            plan.push_back(c);
          }
        }
      }
    }
  }
  return plan;
}

}  // namespace commbench
