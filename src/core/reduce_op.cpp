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

// `none` (a collective that reduces nothing) is printed but is no value of -o.
std::string_view name_of(ReduceOp op) { return op == ReduceOp::none ? "none" : detail::name_in<ReduceOp>(kNames, op); }

ReduceOp parse_reduce_op(std::string_view text, std::string_view flag) {
  return detail::lookup_name<ReduceOp>(kNames, text, flag, detail::canonical_names<ReduceOp>(kAllOps));
}

std::string accepted_reduce_op_names() { return detail::accepted_names<ReduceOp>(kAllOps, kNames); }

std::vector<ReduceOp> parse_reduce_op_list(std::string_view text, std::string_view flag) {
  return detail::parse_list<ReduceOp>(text, flag, kAllOps, parse_reduce_op);
}

}  // namespace commbench
