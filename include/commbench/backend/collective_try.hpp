// Runs a step that may fail on some ranks only, and makes every rank of the group leave
// it the same way: the lowest failing rank rethrows its own error (one message), the
// others throw ReportedByAnotherRank with the same exit code. Without this a rank that
// failed alone would leave the others waiting in the next collective. The rethrown error
// is marked agreed(): the command then exits without aborting the job.
#pragma once

#include <functional>

#include "commbench/backend/bootstrap.hpp"

namespace commbench {

void collective_try(Bootstrap& group, const std::function<void()>& step);

}  // namespace commbench
