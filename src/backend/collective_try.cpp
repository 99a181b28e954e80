#include "commbench/backend/collective_try.hpp"

#include <exception>
#include <string>

#include "commbench/core/error.hpp"

namespace commbench {

void collective_try(Bootstrap& group, const std::function<void()>& step) {
  std::exception_ptr failure;
  ExitCode code = ExitCode::ok;
  try {
    step();
  } catch (const Error& e) {
    failure = std::current_exception();
    code = e.exit_code();
  } catch (const std::bad_alloc&) {
    failure = std::make_exception_ptr(UsageError("out of host memory"));
    code = ExitCode::usage;
  }
  const int first = group.first_rank_where(failure != nullptr);
  if (first < 0) return;
  const std::string agreed = group.broadcast(std::to_string(static_cast<int>(code)), first);
  if (group.rank() == first) std::rethrow_exception(failure);
  throw ReportedByAnotherRank(static_cast<ExitCode>(std::stoi(agreed)));
}

}  // namespace commbench
