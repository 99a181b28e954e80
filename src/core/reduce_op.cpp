#include "commbench/core/reduce_op.hpp"

#include <array>

#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

constexpr std::array kAllOps{ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};
using Named = detail::NamedValue<ReduceOp>;
constexpr std::array kNames{Named{"sum", ReduceOp::sum}, Named{"prod", ReduceOp::prod}, Named{"min", ReduceOp::min},
                            Named{"max", ReduceOp::max}, Named{"avg", ReduceOp::avg}};

}  // namespace

std::span<const ReduceOp> all_reduce_ops() { return kAllOps; }

std::string_view name_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::none: return "none";
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
  }
  return "?";
}

ReduceOp parse_reduce_op(std::string_view text, std::string_view flag) {
  return detail::lookup_name<ReduceOp>(kNames, text, flag, detail::canonical_names<ReduceOp>(kAllOps));
}

std::string accepted_reduce_op_names() { return detail::accepted_names<ReduceOp>(kAllOps, kNames); }

std::vector<ReduceOp> parse_reduce_op_list(std::string_view text, std::string_view flag) {
  return detail::parse_list<ReduceOp>(text, flag, kAllOps, parse_reduce_op);
}

}  // namespace commbench
