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

void run_checks(CheckList& checks, CheckContext& ctx) {
    for (auto& check : checks) {
        if (ctx.stop_requested()) {
            ctx.report->interrupted = true;
            ctx.report->checks.push_back(skipped(*check, kNotRunInterrupted));
            continue;
        }
        if (auto why = check->unmet_requirement(ctx)) {
            ctx.report->checks.push_back(skipped(*check, *why));
            continue;
        }
        auto t0 = std::chrono::steady_clock::now();
        auto seconds = [&] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        };
        if (ctx.progress) ctx.progress->begin(check->key(), check->title());
        std::vector<CheckResult> results;
        try {
            results = check->run(ctx);
        } catch (const Interrupted&) {
            // Cut short before it had a result: not a finding about the machine.
            CheckResult r = skipped(*check, "interrupted before a result");
            results = {r};
        } catch (const Error& e) {
            CheckResult r = skipped(*check, e.what());
            r.verdict = Verdict::Error;
            if (!e.advice().empty()) r.details.push_back(e.advice());
            results = {r};
            ctx.report->errors.push_back({std::string(check->key()), to_string(e.kind()), e.what(), e.advice()});
        } catch (const std::exception& e) {
            CheckResult r = skipped(*check, std::string("internal error: ") + e.what());
            r.verdict = Verdict::Error;
            results = {r};
            ctx.report->errors.push_back({std::string(check->key()), "internal", e.what(),
                                          "please report this with the JSON report attached"});
        }
        if (ctx.progress) ctx.progress->end();
        double d = seconds();
        for (auto& r : results) {
            if (r.key.empty()) r.key = std::string(check->key());
            if (r.title.empty()) r.title = std::string(check->title());
            if (r.duration_s == 0) r.duration_s = d / double(results.size());
            ctx.report->checks.push_back(std::move(r));
        }
        if (ctx.stop_requested()) {  // the stop came while this check ran (checks may mark it themselves)
            ctx.report->interrupted = true;
            if (ctx.report->interrupted_during.empty()) ctx.report->interrupted_during = std::string(check->key());
        }
    }
}

}  // namespace gpuvet
