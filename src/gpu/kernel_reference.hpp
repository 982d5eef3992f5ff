// CPU references: exactly what each kernel in src/gpu/kernels/*.ptx writes, for
// (a) the host side to verify results read back from a real GPU and
// (b) the driver test doubles to emulate the kernels on the CPU.
// The launch contracts are documented at the top of each .ptx file and in docs/kernels.md.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace gpuvet::kernel_ref {

// ---- stream.ptx -------------------------------------------------------------------------
// Buffers are seen as u32 words (4 per 16-byte vector) or floats for triad.
void stream_copy(std::span<const uint32_t> src, std::span<uint32_t> dst);
void stream_write(std::span<uint32_t> dst, uint32_t value);
// a[k] = fma(s, c[k], b[k]), one rounding.
void stream_triad(std::span<float> a, std::span<const float> b, std::span<const float> c, float s);
float triad_value(float s, float b, float c);
// What stream_read writes into partial[0 .. threads): thread g sums (mod 2^32) the words of
// vectors g, g + threads, ... Needs words.size() % 4 == 0 and threads > 0.
std::vector<uint32_t> stream_read_partials(std::span<const uint32_t> words, uint64_t threads);
// What stream_verify adds to its counter: words that differ from expected.
uint64_t stream_verify(std::span<const uint32_t> words, uint32_t expected);

// ---- fma.ptx / fma_bf16.ptx ---------------------------------------------------------------
inline constexpr int kFmaChains = 8;                              // independent chains per thread
inline constexpr int kFmaRounds = 16;                             // rounds per iteration
inline constexpr int kFmaPerIteration = kFmaChains * kFmaRounds;  // FMA instructions per thread
// FLOPs one launch performs: threads x iterations x 128 FMA x 2 x lanes (2 for f16x2/bf16x2).
double fma_flops(uint64_t threads, uint32_t iterations, int lanes);

// The value every thread stores (see fma.ptx): 8 chains from x0 + j, iterations x 16 rounds of
// x = fma(x, a, b), then summed by fma(x_j, 1, sum). Packed types: lane 0 in the low 16 bits.
double fma_f64_result(uint32_t iterations, double a, double b, double x0);
float fma_f32_result(uint32_t iterations, float a, float b, float x0);
uint32_t fma_f16x2_result(uint32_t iterations, uint32_t a, uint32_t b, uint32_t x0);
uint32_t fma_bf16x2_result(uint32_t iterations, uint32_t a, uint32_t b, uint32_t x0);

// ---- memtest.ptx --------------------------------------------------------------------------
enum class MemtestPattern : uint32_t {
    address = 0,
    address_inv = 1,
    walking_ones = 2,
    walking_zeros = 3,
    random = 4,
    random_inv = 5,
    solid = 6,
};
// splitmix64 of the counter seed + (index + 1) * golden ratio: the random pattern's word.
uint64_t splitmix64_at(uint64_t seed, uint64_t index);
// Word index of a buffer at device address base: addr = base + 8 * index.
uint64_t memtest_pattern(MemtestPattern kind, uint64_t addr, uint64_t index, uint64_t seed);
void memtest_write(std::span<uint64_t> words, uint64_t base, MemtestPattern kind, uint64_t seed);

struct MemtestRecord {
    uint64_t index;
    uint64_t observed;
    bool operator==(const MemtestRecord&) const = default;
};
struct MemtestOutcome {
    uint64_t mismatches = 0;
    uint64_t records_claimed = 0;        // may exceed records.size() (max_records)
    std::vector<MemtestRecord> records;  // at most max_records
};
// Emulates memtest_verify launched with `threads` threads in total: each thread records only
// its first mismatch; records are listed in thread order (the GPU's order is scheduling-dependent).
MemtestOutcome memtest_verify(std::span<const uint64_t> words, uint64_t base, MemtestPattern kind, uint64_t seed,
                              uint64_t threads, uint32_t max_records);
// Reads the result buffer the kernel filled (2 + 2 * max_records u64 words).
MemtestOutcome decode_memtest_result(std::span<const uint64_t> raw, uint32_t max_records);
// Size of that buffer in u64 words.
inline uint64_t memtest_result_words(uint32_t max_records) { return 2 + 2 * uint64_t{max_records}; }

// ---- burn_check.ptx -----------------------------------------------------------------------
struct CompareCounts {
    uint64_t mismatches = 0;
    uint64_t nans = 0;
    bool operator==(const CompareCounts&) const = default;
};
CompareCounts burn_compare_f32(std::span<const float> a, std::span<const float> b, float abs_tol, float rel_tol);
CompareCounts burn_compare_f16(std::span<const uint16_t> a, std::span<const uint16_t> b, float abs_tol, float rel_tol);

}  // namespace gpuvet::kernel_ref
