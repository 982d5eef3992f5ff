#include "checks/gpu_memtest.hpp"

#include <algorithm>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_memtest_judge.hpp"
#include "checks/run_facts.hpp"
#include "gpu/inventory.hpp"
#include "gpu/kernel_reference.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

using namespace measure;
namespace ref = kernel_ref;

constexpr std::uint64_t kChunk = 1ull << 30;            // whole 2 MiB pages
constexpr std::uint32_t kMaxRecords = 64;               // error records the device keeps per chunk
constexpr std::size_t kMaxReported = 20;                // errors named in the report
constexpr std::uint64_t kSeed = 0x6770757665742D31ull;  // "gpuvet-1"

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

// Nearly all free memory in whole 2 MiB pages, at most kChunk per allocation. Leaves a margin
// for the driver, the result buffer and other checks' kernels.
std::vector<DeviceBuffer> alloc_chunks(GpuSession& s, const GpuSession::MemInfo& mem) {
    const std::uint64_t margin = std::max<std::uint64_t>(256ull << 20, mem.total_bytes / 50);
    std::vector<DeviceBuffer> chunks;
    std::uint64_t left = mem.free_bytes > margin ? mem.free_bytes - margin : 0;
    while (left >= (2ull << 20)) {
        std::uint64_t n = std::min<std::uint64_t>(kChunk, left / (2ull << 20) * (2ull << 20));
        cu::CUdeviceptr p = 0;
        if (s.api().cuMemAlloc(&p, n) != cu::CUDA_SUCCESS) break;  // fragmentation: test what we got
        chunks.emplace_back(&s.api(), p, n);
        left -= n;
    }
    if (chunks.empty())
        throw runtime_error("no GPU memory could be allocated for the memory test",
                            "stop the processes using the GPU (nvidia-smi) and run again");
    return chunks;
}

// Writes and verifies one chunk with one pattern; counts its errors and records the first ones.
// `offset` is where the chunk starts in the memory tested.
void test_chunk(GpuSession& s, const Stream& st, const DeviceBuffer& c, std::uint64_t offset, ref::MemtestPattern pat,
                std::uint64_t seed, const DeviceBuffer& result, MemtestRun& run) {
    const std::uint64_t words = c.bytes() / 8;
    const std::uint32_t pattern = static_cast<std::uint32_t>(pat);
    s.zero(result, &st);
    run.processed_bytes += c.bytes();
    run.ms_total += s.time_ms(st, [&] {
        s.launch("memtest_write", s.geometry("memtest_write"), st,
                 {arg::ptr(c), arg::u64(words), arg::u32(pattern), arg::u64(seed)});
        s.launch(
            "memtest_verify", s.geometry("memtest_verify"), st,
            {arg::ptr(c), arg::u64(words), arg::u32(pattern), arg::u64(seed), arg::ptr(result), arg::u32(kMaxRecords)});
    });
    std::vector<std::uint64_t> raw(ref::memtest_result_words(kMaxRecords));
    s.download(raw.data(), result.ptr(), raw.size() * 8);
    ref::MemtestOutcome o = ref::decode_memtest_result(raw, kMaxRecords);
    run.errors += o.mismatches;
    for (const auto& rec : o.records) {
        if (run.first_errors.size() >= kMaxReported) break;
        std::uint64_t addr = c.ptr() + 8 * rec.index;
        run.first_errors.push_back({offset + 8 * rec.index, addr, pattern_name(pat),
                                    ref::memtest_pattern(pat, addr, rec.index, seed), rec.observed});
    }
}

MemtestRun measure_memtest(CheckContext& ctx, GpuSet::Member& m) {
    GpuSession& s = *m.session;
    auto mem = s.mem_info();
    MemtestRun run;
    run.gpu = m.index;
    run.memory_total_bytes = mem.total_bytes;
    if (m.info && m.info->memory_total_bytes) run.nvml_memory_total_bytes = *m.info->memory_total_bytes;
    std::vector<DeviceBuffer> chunks = alloc_chunks(s, mem);
    for (const DeviceBuffer& c : chunks) run.tested_bytes += c.bytes();
    DeviceBuffer result = s.alloc(ref::memtest_result_words(kMaxRecords) * 8);
    Stream st = s.stream();
    const std::vector<ref::MemtestPattern> pats = patterns(ctx);
    run.patterns = static_cast<int>(pats.size());
    run.passes = by_tier(ctx, 1, 1, 2);
    // A stop is polled before every chunk; the errors found before it still count.
    for (int pass = 0; pass < run.passes; ++pass)
        for (ref::MemtestPattern pat : pats) {
            const std::uint64_t seed = kSeed + static_cast<std::uint64_t>(pass);
            std::uint64_t offset = 0;
            for (const DeviceBuffer& c : chunks) {
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

void measure_gpu(CheckContext& ctx, GpuSet::Member& m, CheckResult& r) {
    const MemtestRun run = measure_memtest(ctx, m);
    judge_memtest(run, ctx.facts->spec_of(m.index), r);
    add_clocks(r, m.index);
    if (run.interrupted && !run.errors) throw Interrupted{};  // for_each_gpu: SKIP, figures kept
}

}  // namespace

std::vector<CheckResult> GpuMemtestCheck::run(CheckContext& ctx) {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::memtest(ctx, key(), title());
    return measure::for_each_gpu(ctx, key(), title(),
                                 [&](GpuSet::Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet
