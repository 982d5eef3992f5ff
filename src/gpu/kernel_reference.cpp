#include "gpu/kernel_reference.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "core/error.hpp"
#include "gpu/small_float.hpp"

namespace gpuvet::kernel_ref {
namespace {

Error misuse(const std::string& what) { return internal_error("kernel reference misused: " + what); }

template <class T>
bool same_bits(T x, T y) {
    return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// steps applications of x = fma(x, a, b). Stops early at a fixed point or a 2-cycle, which the
// suggested inputs reach quickly, so long launches stay cheap to check.
template <class T>
T iterate_chain(T x, T a, T b, uint64_t steps) {
    T prev = x;
    for (uint64_t k = 0; k < steps; ++k) {
        const T next = std::fma(x, a, b);
        if (same_bits(next, x)) return next;
        if (k >= 1 && same_bits(next, prev)) return ((steps - k - 1) % 2 == 0) ? next : x;
        prev = x;
        x = next;
    }
    return x;
}

template <class T>
T fma_result(uint32_t iterations, T a, T b, T x0) {
    T x[kFmaChains];
    x[0] = x0;
    for (int j = 1; j < kFmaChains; ++j) x[j] = std::fma(x[j - 1], T(1), T(1));
    const uint64_t steps = uint64_t{iterations} * kFmaRounds;
    for (T& v : x) v = iterate_chain(v, a, b, steps);
    T sum = x[0];
    for (int j = 1; j < kFmaChains; ++j) sum = std::fma(x[j], T(1), sum);
    return sum;
}

// A 16-bit format has 65536 states: find the chain's cycle exactly and jump to the end.
uint16_t iterate_small(small_float::Format f, uint16_t x, uint16_t a, uint16_t b, uint64_t steps) {
    std::vector<int64_t> seen(65536, -1);
    std::vector<uint16_t> order;
    for (uint64_t k = 0;; ++k) {
        if (k == steps) return x;
        if (seen[x] >= 0) {
            const auto mu = static_cast<uint64_t>(seen[x]);
            const uint64_t period = k - mu;
            return order[mu + (steps - k) % period];
        }
        seen[x] = static_cast<int64_t>(k);
        order.push_back(x);
        x = small_float::fma(f, x, a, b);
    }
}

uint16_t small_lane_result(small_float::Format f, uint32_t iterations, uint16_t a, uint16_t b, uint16_t x0) {
    const uint16_t one = small_float::from_double(f, 1.0);
    uint16_t x[kFmaChains];
    x[0] = x0;
    for (int j = 1; j < kFmaChains; ++j) x[j] = small_float::fma(f, x[j - 1], one, one);
    const uint64_t steps = uint64_t{iterations} * kFmaRounds;
    for (uint16_t& v : x) v = iterate_small(f, v, a, b, steps);
    uint16_t sum = x[0];
    for (int j = 1; j < kFmaChains; ++j) sum = small_float::fma(f, x[j], one, sum);
    return sum;
}

uint32_t small_packed_result(small_float::Format f, uint32_t iterations, uint32_t a, uint32_t b, uint32_t x0) {
    using small_float::lane;
    return small_float::pack(small_lane_result(f, iterations, lane(a, 0), lane(b, 0), lane(x0, 0)),
                             small_lane_result(f, iterations, lane(a, 1), lane(b, 1), lane(x0, 1)));
}

void compare_one(float a, float b, float abs_tol, float rel_tol, CompareCounts& out) {
    if (std::isnan(a) || std::isnan(b)) {
        ++out.nans;
        return;
    }
    const float diff = std::fabs(a - b);
    if (diff > std::fma(rel_tol, std::fabs(b), abs_tol)) ++out.mismatches;
}

}  // namespace

// ---- stream --------------------------------------------------------------------------------
void stream_copy(std::span<const uint32_t> src, std::span<uint32_t> dst) {
    if (src.size() != dst.size()) throw misuse("stream_copy buffers differ in size");
    std::copy(src.begin(), src.end(), dst.begin());
}

void stream_write(std::span<uint32_t> dst, uint32_t value) { std::fill(dst.begin(), dst.end(), value); }

float triad_value(float s, float b, float c) { return std::fma(s, c, b); }

void stream_triad(std::span<float> a, std::span<const float> b, std::span<const float> c, float s) {
    if (a.size() != b.size() || a.size() != c.size()) throw misuse("stream_triad buffers differ in size");
    for (size_t k = 0; k < a.size(); ++k) a[k] = triad_value(s, b[k], c[k]);
}

std::vector<uint32_t> stream_read_partials(std::span<const uint32_t> words, uint64_t threads) {
    if (threads == 0) throw misuse("stream_read with zero threads");
    if (words.size() % 4 != 0) throw misuse("stream_read buffer is not whole 16-byte vectors");
    std::vector<uint32_t> partial(threads, 0);
    const uint64_t n_vec = words.size() / 4;
    for (uint64_t i = 0; i < n_vec; ++i) {
        uint32_t& p = partial[i % threads];
        for (int w = 0; w < 4; ++w) p += words[4 * i + w];
    }
    return partial;
}

uint64_t stream_verify(std::span<const uint32_t> words, uint32_t expected) {
    uint64_t bad = 0;
    for (uint32_t w : words) bad += (w != expected);
    return bad;
}

// ---- fma -----------------------------------------------------------------------------------
double fma_flops(uint64_t threads, uint32_t iterations, int lanes) {
    return static_cast<double>(threads) * iterations * kFmaPerIteration * 2.0 * lanes;
}

double fma_f64_result(uint32_t iterations, double a, double b, double x0) {
    return fma_result<double>(iterations, a, b, x0);
}
float fma_f32_result(uint32_t iterations, float a, float b, float x0) {
    return fma_result<float>(iterations, a, b, x0);
}
uint32_t fma_f16x2_result(uint32_t iterations, uint32_t a, uint32_t b, uint32_t x0) {
    return small_packed_result(small_float::Format::f16, iterations, a, b, x0);
}
uint32_t fma_bf16x2_result(uint32_t iterations, uint32_t a, uint32_t b, uint32_t x0) {
    return small_packed_result(small_float::Format::bf16, iterations, a, b, x0);
}

// ---- memtest -------------------------------------------------------------------------------
uint64_t splitmix64_at(uint64_t seed, uint64_t index) {
    // splitmix64 (Steele, Lea, Flood 2014) constants; state = seed + (index + 1) * golden.
    uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t memtest_pattern(MemtestPattern kind, uint64_t addr, uint64_t index, uint64_t seed) {
    const uint64_t walking = uint64_t{1} << ((index + seed) & 63);
    switch (kind) {
        case MemtestPattern::address: return addr;
        case MemtestPattern::address_inv: return ~addr;
        case MemtestPattern::walking_ones: return walking;
        case MemtestPattern::walking_zeros: return ~walking;
        case MemtestPattern::random: return splitmix64_at(seed, index);
        case MemtestPattern::random_inv: return ~splitmix64_at(seed, index);
        case MemtestPattern::solid: return seed;
    }
    return seed;  // the kernel treats unknown kinds as solid
}

void memtest_write(std::span<uint64_t> words, uint64_t base, MemtestPattern kind, uint64_t seed) {
    for (uint64_t i = 0; i < words.size(); ++i) words[i] = memtest_pattern(kind, base + 8 * i, i, seed);
}

MemtestOutcome memtest_verify(std::span<const uint64_t> words, uint64_t base, MemtestPattern kind, uint64_t seed,
                              uint64_t threads, uint32_t max_records) {
    if (threads == 0) throw misuse("memtest_verify with zero threads");
    MemtestOutcome out;
    std::map<uint64_t, MemtestRecord> first_per_thread;  // ordered by thread
    for (uint64_t i = 0; i < words.size(); ++i) {
        if (words[i] == memtest_pattern(kind, base + 8 * i, i, seed)) continue;
        ++out.mismatches;
        first_per_thread.try_emplace(i % threads, MemtestRecord{i, words[i]});
    }
    out.records_claimed = first_per_thread.size();
    for (const auto& [thread, rec] : first_per_thread) {
        if (out.records.size() >= max_records) break;
        out.records.push_back(rec);
    }
    return out;
}

MemtestOutcome decode_memtest_result(std::span<const uint64_t> raw, uint32_t max_records) {
    if (raw.size() < memtest_result_words(max_records)) throw misuse("memtest result buffer too small");
    MemtestOutcome out;
    out.mismatches = raw[0];
    out.records_claimed = raw[1];
    const uint64_t n = std::min<uint64_t>(raw[1], max_records);
    for (uint64_t k = 0; k < n; ++k) out.records.push_back({raw[2 + 2 * k], raw[3 + 2 * k]});
    return out;
}

// ---- burn ----------------------------------------------------------------------------------
CompareCounts burn_compare_f32(std::span<const float> a, std::span<const float> b, float abs_tol, float rel_tol) {
    if (a.size() != b.size()) throw misuse("burn_compare buffers differ in size");
    CompareCounts out;
    for (size_t k = 0; k < a.size(); ++k) compare_one(a[k], b[k], abs_tol, rel_tol, out);
    return out;
}

CompareCounts burn_compare_f16(std::span<const uint16_t> a, std::span<const uint16_t> b, float abs_tol, float rel_tol) {
    if (a.size() != b.size()) throw misuse("burn_compare buffers differ in size");
    using small_float::Format;
    CompareCounts out;
    for (size_t k = 0; k < a.size(); ++k) {
        // f16 -> f32 is exact, as cvt.f32.f16 on the GPU.
        compare_one(static_cast<float>(small_float::to_double(Format::f16, a[k])),
                    static_cast<float>(small_float::to_double(Format::f16, b[k])), abs_tol, rel_tol, out);
    }
    return out;
}

}  // namespace gpuvet::kernel_ref
