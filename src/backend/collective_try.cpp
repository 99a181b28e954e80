#include "commbench/backend/collective_try.hpp"

#include <exception>
#include <string>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

void collective_try(Bootstrap& group, const std::function<void()>& step) {
  std::exception_ptr failure;
  ExitCode code = ExitCode::ok;
  try {
    step();
  } catch (Error& e) {
    // Marked before the agreement below, but only ever rethrown after it succeeded; if
    // the agreement itself fails, its own error (not agreed) replaces this one.
    e.mark_agreed();
    failure = std::current_exception();
    code = e.exit_code();
  } catch (const std::bad_alloc&) {
    UsageError out_of_memory("out of host memory");
    out_of_memory.mark_agreed();
    failure = std::make_exception_ptr(out_of_memory);
    code = ExitCode::usage;
  }
  const int first = group.first_rank_where(failure != nullptr);
  if (first < 0) return;
  const int agreed = broadcast_as(group, static_cast<int>(code), first);
  if (group.rank() == first) std::rethrow_exception(failure);
  throw ReportedByAnotherRank(static_cast<ExitCode>(agreed));
}

}  // namespace commbench
