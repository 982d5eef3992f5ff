// gpu.memtest on AMD GPUs: nearly all free VRAM written and verified with memtest.cl's patterns,
// judged by judge_memtest (gpu_memtest_judge.hpp): any error fails, the memory tested is held
// against the memory sold.
#include <algorithm>
#include <string>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_measurement.hpp"
#include "checks/gpu_memtest_judge.hpp"
#include "core/context.hpp"
#include "gpu/kernel_reference.hpp"

namespace gpuvet::amd_measure {

namespace {

namespace ref = kernel_ref;
using measure::MemtestRun;

constexpr std::uint64_t kChunk = 1ull << 30;
constexpr std::uint32_t kMaxRecords = 64;
constexpr std::size_t kMaxReported = 20;
constexpr std::uint64_t kSeed = 0x6770757665742D31ull;  // "gpuvet-1", as on NVIDIA

std::vector<ref::MemtestPattern> patterns(const CheckContext& ctx) {
    using P = ref::MemtestPattern;
    switch (ctx.options.tier) {
        case Tier::Quick: return {P::random};
        case Tier::Full:
            return {P::address, P::address_inv, P::walking_ones, P::walking_zeros, P::random, P::random_inv};
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

// Nearly all free memory in whole 2 MiB pages, at most kChunk per allocation, with the margin the
// NVIDIA test leaves for the driver and the other checks' buffers.
std::vector<HipBuffer> alloc_chunks(HipSession& s, const HipSession::MemInfo& mem) {
    const std::uint64_t margin = std::max<std::uint64_t>(256ull << 20, mem.total_bytes / 50);
    std::vector<HipBuffer> chunks;
    std::uint64_t left = mem.free_bytes > margin ? mem.free_bytes - margin : 0;
    while (left >= (2ull << 20)) {
        std::uint64_t n = std::min<std::uint64_t>(kChunk, left / (2ull << 20) * (2ull << 20));
        HipBuffer b = s.try_alloc(n);
        if (!b.get()) break;  // fragmentation: test what we got
        chunks.push_back(std::move(b));
        left -= n;
    }
    if (chunks.empty())
        throw runtime_error("no GPU memory could be allocated for the memory test",
                            "stop the processes using the GPU (amd-smi process) and run again");
    return chunks;
}

void test_chunk(HipSession& s, const HipStream& st, const HipBuffer& c, std::uint64_t offset, ref::MemtestPattern pat,
                std::uint64_t seed, const HipBuffer& result, MemtestRun& run) {
    using namespace arg;
    const std::uint64_t words = c.bytes() / 8;
    const std::uint32_t pattern = static_cast<std::uint32_t>(pat);
    s.zero(result);
    run.processed_bytes += c.bytes();
    run.ms_total += s.time_ms(st, [&] {
        s.launch("memtest_write", s.geometry("memtest_write"), st,
                 {ptr(c.address()), u64(words), u32(pattern), u64(seed)});
        s.launch("memtest_verify", s.geometry("memtest_verify"), st,
                 {ptr(c.address()), u64(words), u32(pattern), u64(seed), ptr(result.address()), u32(kMaxRecords)});
    });
    std::vector<std::uint64_t> raw(ref::memtest_result_words(kMaxRecords));
    s.download(raw.data(), result, raw.size() * 8);
    ref::MemtestOutcome o = ref::decode_memtest_result(raw, kMaxRecords);
    run.errors += o.mismatches;
    for (const auto& rec : o.records) {
        if (run.first_errors.size() >= kMaxReported) break;
        std::uint64_t addr = c.address() + 8 * rec.index;
        run.first_errors.push_back({offset + 8 * rec.index, addr, pattern_name(pat),
                                    ref::memtest_pattern(pat, addr, rec.index, seed), rec.observed});
    }
}

MemtestRun measure_memtest(CheckContext& ctx, Member& m) {
    HipSession& s = *m.session;
    auto mem = s.mem_info();
    MemtestRun run;
    run.gpu = m.index;
    run.runtime = "HIP";
    run.management = "AMD SMI";
    run.memory_total_bytes = mem.total_bytes;
    if (m.facts.memory_total_bytes) run.nvml_memory_total_bytes = *m.facts.memory_total_bytes;
    std::vector<HipBuffer> chunks = alloc_chunks(s, mem);
    for (const HipBuffer& c : chunks) run.tested_bytes += c.bytes();
    HipBuffer result = s.alloc(ref::memtest_result_words(kMaxRecords) * 8);
    HipStream st = s.stream();
    const std::vector<ref::MemtestPattern> pats = patterns(ctx);
    run.patterns = static_cast<int>(pats.size());
    run.passes = measure::by_tier(ctx, 1, 1, 2);
    for (int pass = 0; pass < run.passes; ++pass)
        for (ref::MemtestPattern pat : pats) {
            const std::uint64_t seed = kSeed + static_cast<std::uint64_t>(pass);
            std::uint64_t offset = 0;
            for (const HipBuffer& c : chunks) {
                if (ctx.stop_requested()) {
                    run.interrupted = true;
                    return run;
                }
                test_chunk(s, st, c, offset, pat, seed, result, run);
                offset += c.bytes();
            }
        }
    return run;
}

}  // namespace

std::vector<CheckResult> memtest(CheckContext& ctx, std::string_view key, std::string_view title) {
    return for_each_gpu(ctx, key, title, [&](Member& m, CheckResult& r) {
        const MemtestRun run = measure_memtest(ctx, m);
        measure::judge_memtest(run, m.spec, r);
        add_clocks(r, m.index);
        if (run.interrupted && !run.errors) throw Interrupted{};
    });
}

}  // namespace gpuvet::amd_measure
