#include "core/runner.hpp"

#include <chrono>
#include <exception>

#include "core/error.hpp"

namespace gpuvet {

CheckResult skipped(const Check& c, std::string reason) {
    CheckResult r;
    r.key = std::string(c.key());
    r.title = std::string(c.title());
    r.verdict = Verdict::Skip;
    r.summary = std::move(reason);
    return r;
}

namespace {

// A thrown error as the check's one result; typed errors are also listed in the report's errors.
CheckResult error_result(const Check& check, CheckContext& ctx, std::exception_ptr thrown) {
    try {
        std::rethrow_exception(thrown);
    } catch (const Interrupted&) {
        // Cut short before it had a result: not a finding about the machine.
        return skipped(check, "interrupted before a result");
    } catch (const Error& e) {
        CheckResult r = skipped(check, e.what());
        r.verdict = Verdict::Error;
        if (!e.advice().empty()) r.details.push_back(e.advice());
        ctx.report->errors.push_back({std::string(check.key()), to_string(e.kind()), e.what(), e.advice()});
        return r;
    } catch (const std::exception& e) {
        CheckResult r = skipped(check, std::string("internal error: ") + e.what());
        r.verdict = Verdict::Error;
        ctx.report->errors.push_back(
            {std::string(check.key()), "internal", e.what(), "please report this with the JSON report attached"});
        return r;
    }
}

std::vector<CheckResult> run_one(Check& check, CheckContext& ctx) {
    if (ctx.stop_requested()) {
        ctx.report->interrupted = true;
        return {skipped(check, kNotRunInterrupted)};
    }
    if (auto why = check.unmet_requirement(ctx)) return {skipped(check, *why)};
    auto t0 = std::chrono::steady_clock::now();
    if (ctx.progress) ctx.progress->begin(check.key(), check.title());
    std::vector<CheckResult> results;
    try {
        results = check.run(ctx);
    } catch (...) {
        results = {error_result(check, ctx, std::current_exception())};
    }
    if (ctx.progress) ctx.progress->end();
    double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& r : results) {
        if (r.key.empty()) r.key = std::string(check.key());
        if (r.title.empty()) r.title = std::string(check.title());
        if (r.duration_s == 0) r.duration_s = d / double(results.size());
    }
    if (ctx.stop_requested()) {  // the stop came while this check ran (checks may mark it themselves)
        ctx.report->interrupted = true;
        if (ctx.report->interrupted_during.empty()) ctx.report->interrupted_during = std::string(check.key());
    }
    return results;
}

}  // namespace

void run_checks(CheckList& checks, CheckContext& ctx) {
    std::vector<std::vector<CheckResult>> by_check(checks.size());
    std::vector<CheckResult> done;  // what the second stage may read
    for (int stage = 0; stage < 2; ++stage) {
        for (std::size_t i = 0; i < checks.size(); ++i) {
            std::vector<std::string> reads = checks[i]->reads();
            if (reads.empty() != (stage == 0)) continue;
            ctx.prior = PriorResults(&done, reads);
            by_check[i] = run_one(*checks[i], ctx);
            done.insert(done.end(), by_check[i].begin(), by_check[i].end());
        }
    }
    ctx.prior = PriorResults();
    for (auto& results : by_check)  // registry order, whatever stage each ran in
        for (auto& r : results) ctx.report->checks.push_back(std::move(r));
}

}  // namespace gpuvet
