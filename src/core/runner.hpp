// Runs checks one after another. One failing check never stops the others.
#pragma once
#include "core/check.hpp"
#include "core/context.hpp"

namespace gpuvet {

// Runs `checks`: first those that read no other result, in order, then those that declared
// reads() (core/check.hpp), in order; appends all results to ctx.report->checks in the order of
// `checks`. Unmet requirements become SKIP; a thrown gpuvet::Error becomes ERROR with its advice;
// a stop request (Ctrl-C) skips the remaining checks and marks the report interrupted.
void run_checks(CheckList& checks, CheckContext& ctx);

// A result for a check that did not run.
CheckResult skipped(const Check& c, std::string reason);

}  // namespace gpuvet
