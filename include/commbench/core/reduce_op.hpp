// Reduction operators of reducing collectives.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commbench {

// `none` marks rows of collectives that do not reduce (allgather, broadcast, ...).
enum class ReduceOp { none, sum, prod, min, max, avg };

std::span<const ReduceOp> all_reduce_ops();  // sum, prod, min, max, avg
std::string_view name_of(ReduceOp op);
ReduceOp parse_reduce_op(std::string_view text, std::string_view flag);
// Every spelling parse_reduce_op_list accepts, for help texts.
std::string accepted_reduce_op_names();
std::vector<ReduceOp> parse_reduce_op_list(std::string_view text, std::string_view flag);

}  // namespace commbench
