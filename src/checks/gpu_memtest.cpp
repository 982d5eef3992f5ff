#include "checks/gpu_memtest.hpp"

#include <algorithm>
#include <cstdio>

#include "checks/run_facts.hpp"
#include "gpu/inventory.hpp"
#include "gpu/kernel_reference.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

using namespace measure;
namespace ref = kernel_ref;

constexpr std::uint64_t kChunk = 1ull << 30;       // whole 2 MiB pages
constexpr std::uint32_t kMaxRecords = 64;
constexpr std::uint64_t kSeed = 0x6770757665742D31ull;  // "gpuvet-1"

std::string hex(std::uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

std::vector<ref::MemtestPattern> patterns(const CheckContext& ctx) {
    using P = ref::MemtestPattern;
    switch (ctx.options.tier) {
        case Tier::Quick: return {P::random};
        case Tier::Full: return {P::address, P::address_inv, P::walking_ones, P::walking_zeros, P::random, P::random_inv};
        default: return {P::address, P::walking_ones, P::random, P::random_inv};
    }
}
const char* pattern_name(ref::MemtestPattern p) {
    switch (p) {
        case ref::MemtestPattern::address: return "address";
        case ref::MemtestPattern::address_inv: return "inverted address";
        case ref::MemtestPattern::walking_ones: return "walking ones";
        case ref::MemtestPattern::walking_zeros: return "walking zeros";
        case ref::MemtestPattern::random: return "random";
        case ref::MemtestPattern::random_inv: return "inverted random";
        default: return "solid";
    }
}

void measure_gpu(CheckContext& ctx, GpuSet::Member& m, CheckResult& r) {
    GpuSession& s = *m.session;
    auto mem = s.mem_info();
    // Leave a margin for the driver, the result buffer and other checks' kernels.
    const std::uint64_t margin = std::max<std::uint64_t>(256ull << 20, mem.total_bytes / 50);
    std::vector<DeviceBuffer> chunks;
    std::uint64_t left = mem.free_bytes > margin ? mem.free_bytes - margin : 0, tested = 0;
    while (left >= (2ull << 20)) {
        std::uint64_t n = std::min<std::uint64_t>(kChunk, left / (2ull << 20) * (2ull << 20));
        cu::CUdeviceptr p = 0;
        if (s.api().cuMemAlloc(&p, n) != cu::CUDA_SUCCESS) break;  // fragmentation: test what we got
        chunks.emplace_back(&s.api(), p, n);
        left -= n;
        tested += n;
    }
    if (chunks.empty()) throw runtime_error("no GPU memory could be allocated for the memory test",
                                            "stop the processes using the GPU (nvidia-smi) and run again");
    DeviceBuffer result = s.alloc(ref::memtest_result_words(kMaxRecords) * 8);
    Stream st = s.stream();
    const int passes = by_tier(ctx, 1, 1, 2);
    std::uint64_t errors = 0;
    std::vector<std::string> found;
    double ms_total = 0;
    bool cut = false;  // a stop ended the test early: errors found so far still count
    for (int pass = 0; pass < passes && !cut; ++pass)
        for (ref::MemtestPattern pat : patterns(ctx)) {
            if (cut) break;
            std::uint64_t seed = kSeed + static_cast<std::uint64_t>(pass);
            std::uint64_t offset = 0;
            for (const DeviceBuffer& c : chunks) {
                if (ctx.stop_requested()) {  // one chunk per poll
                    cut = true;
                    break;
                }
                std::uint64_t words = c.bytes() / 8;
                s.zero(result, &st);
                ms_total += s.time_ms(st, [&] {
                    s.launch("memtest_write", s.geometry("memtest_write"), st,
                             {arg::ptr(c), arg::u64(words), arg::u32(static_cast<std::uint32_t>(pat)), arg::u64(seed)});
                    s.launch("memtest_verify", s.geometry("memtest_verify"), st,
                             {arg::ptr(c), arg::u64(words), arg::u32(static_cast<std::uint32_t>(pat)), arg::u64(seed),
                              arg::ptr(result), arg::u32(kMaxRecords)});
                });
                std::vector<std::uint64_t> raw(ref::memtest_result_words(kMaxRecords));
                s.download(raw.data(), result.ptr(), raw.size() * 8);
                ref::MemtestOutcome o = ref::decode_memtest_result(raw, kMaxRecords);
                errors += o.mismatches;
                for (const auto& rec : o.records) {
                    if (found.size() >= 20) break;
                    std::uint64_t addr = c.ptr() + 8 * rec.index;
                    std::uint64_t want = ref::memtest_pattern(pat, addr, rec.index, seed);
                    found.push_back("bit error at byte offset " + std::to_string(offset + 8 * rec.index) +
                                    " of the memory tested (address " + hex(addr) + "), pattern " + pattern_name(pat) +
                                    ": wrote " + hex(want) + ", read " + hex(rec.observed) + ", flipped bits " +
                                    hex(want ^ rec.observed));
                }
                offset += c.bytes();
            }
        }
    const double gib = double(tested) / double(1ull << 30);
    Measurement tm = Measurement::number("tested_gib", "Memory tested", gib, "GiB").on_gpu(m.index);
    const GpuSpec* sp = ctx.facts->spec_of(m.index);
    if (sp && sp->memory_size_gib > 0) {
        Reference ref;
        ref.spec = sp->memory_size_gib;
        ref.warn_below = 0.85 * sp->memory_size_gib;  // driver reserve + margin stay well under 15%
        ref.source = datasheet_source(*sp);
        tm.against(ref);
    }
    r.measurements.push_back(tm);
    r.measurements.push_back(Measurement::number("tested_bytes", "Bytes tested", double(tested), "bytes").on_gpu(m.index));
    r.measurements.push_back(Measurement::number("memory_total_bytes", "Memory total (CUDA)", double(mem.total_bytes), "bytes").on_gpu(m.index));
    if (m.info && m.info->memory_total_bytes)
        r.measurements.push_back(Measurement::number("nvml_memory_total_bytes", "Memory total (NVML)",
                                                     double(*m.info->memory_total_bytes), "bytes").on_gpu(m.index));
    r.measurements.push_back(Measurement::number("errors", "Memory errors", double(errors), "count").on_gpu(m.index));
    r.measurements.push_back(Measurement::number("patterns", "Patterns x passes", double(patterns(ctx).size() * passes), "count").on_gpu(m.index));
    if (ms_total > 0)
        r.measurements.push_back(Measurement::number("test_gbps", "Write + verify rate",
            2.0 * double(tested) * double(patterns(ctx).size() * passes) / (ms_total * 1e-3) / 1e9, "GB/s").on_gpu(m.index));
    add_clocks(r, m.index);
    std::string what = fixed(gib, 1) + " GiB tested with " + std::to_string(patterns(ctx).size()) + " pattern(s) x " +
                       std::to_string(passes) + " pass(es)";
    if (cut && !errors) throw Interrupted{};  // no verdict on a test that did not cover the memory
    if (errors) {
        r.verdict = Verdict::Fail;
        r.summary = std::to_string(errors) + " memory error(s) in " + what + ": " + found.front();
        r.details = found;
        if (cut) r.details.push_back("interrupted before the whole memory was tested: the errors above were found before the stop");
        r.details.push_back("a GPU with memory errors must be replaced or repaired: report it to the provider with this report");
        return;
    }
    grade_into(r, tm);
    r.summary = r.verdict == Verdict::Pass ? "no errors in " + what + "."
                                           : "no errors, but only " + what + " of the " + fixed(sp->memory_size_gib, 0) +
                                                 " GiB sold: other processes hold memory, or the GPU has less";
}

}  // namespace

std::vector<CheckResult> GpuMemtestCheck::run(CheckContext& ctx) {
    return measure::for_each_gpu(ctx, key(), title(), [&](GpuSet::Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet
