// CPU emulation of gpuvet's kernels (src/gpu/kernels/*.ptx) for the fake libcuda, built on the
// same CPU references gpuvet verifies against (src/gpu/kernel_reference.*). Simulated time comes
// from the scenario: bytes / hbm_bandwidth_gbps for the memory kernels, FLOPs / <dtype>_tflops for
// the FMA kernels, so figures measured through the fake equal the scenario's.
// Buffers of kLazyBytes or more written by a kernel are kept as descriptions (see the header).
#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <span>

#include "emulated_kernels.hpp"
#include "gpu/kernel_reference.hpp"

namespace fake {

namespace {

namespace ref = gpuvet::kernel_ref;

constexpr uint64_t kLazyBytes = 1ull << 20;

struct Lazy {
    uint64_t bytes = 0;
    bool memtest = false;  // else a u32 fill
    uint32_t value = 0;
    uint32_t kind = 0;
    uint64_t seed = 0;
};
std::map<uint64_t, Lazy>& lazies() {  // by start address
    static std::map<uint64_t, Lazy> m;
    return m;
}

template <class T>
T param(const KernelLaunch& l, int i) {
    T v;
    std::memcpy(&v, l.params[i], sizeof v);
    return v;
}
uint64_t threads(const KernelLaunch& l) {
    return uint64_t{l.grid[0]} * l.grid[1] * l.grid[2] * l.block[0] * l.block[1] * l.block[2];
}
double mem_ns(const KernelLaunch& l, double bytes) { return bytes / l.gpu->hbm_bandwidth_gbps; }

// The exact description of [ptr, ptr+bytes), or nullptr.
const Lazy* exact(uint64_t ptr, uint64_t bytes) {
    auto it = lazies().find(ptr);
    return it != lazies().end() && it->second.bytes == bytes ? &it->second : nullptr;
}

void flip_cells(const KernelLaunch& l, uint64_t ptr, uint64_t bytes, char* host) {
    for (auto [addr, flip] : l.bad_cells(ptr, bytes)) {
        uint64_t w;
        std::memcpy(&w, host + (addr - ptr), 8);
        w ^= flip;
        std::memcpy(host + (addr - ptr), &w, 8);
    }
}

void write_desc(const KernelLaunch& l, uint64_t ptr, const Lazy& d, char* host) {
    if (d.memtest) {
        ref::memtest_write({reinterpret_cast<uint64_t*>(host), d.bytes / 8}, ptr,
                           static_cast<ref::MemtestPattern>(d.kind), d.seed);
    } else {
        auto* w = reinterpret_cast<uint32_t*>(host);
        std::fill(w, w + d.bytes / 4, d.value);
    }
    flip_cells(l, ptr, d.bytes, host);
}

// Host bytes of [ptr, ptr+bytes) with any description over them written out first.
char* real(const KernelLaunch& l, uint64_t ptr, uint64_t bytes) {
    lazy_materialize(l, ptr, bytes);
    return static_cast<char*>(l.host(ptr, bytes));
}

// Output of a kernel: a description when large, else real bytes via `eager`.
template <class F>
void produce(const KernelLaunch& l, uint64_t ptr, uint64_t bytes, const Lazy& d, F eager) {
    if (bytes >= kLazyBytes) {
        lazy_forget(ptr, bytes);
        Lazy x = d;
        x.bytes = bytes;
        lazies()[ptr] = x;
        return;
    }
    char* h = real(l, ptr, bytes);
    lazy_forget(ptr, bytes);
    eager(h);
    flip_cells(l, ptr, bytes, h);
}

// ---- stream.ptx ----------------------------------------------------------------------------------
double stream_write(const KernelLaunch& l) {
    uint64_t dst = param<uint64_t>(l, 0), n = param<uint64_t>(l, 1);
    uint32_t v = param<uint32_t>(l, 2);
    if (!l.host(dst, n * 16)) return -1;
    Lazy d;
    d.value = v;
    produce(l, dst, n * 16, d, [&](char* h) { ref::stream_write({reinterpret_cast<uint32_t*>(h), n * 4}, v); });
    return mem_ns(l, 16.0 * n);
}

double stream_copy(const KernelLaunch& l) {
    uint64_t dst = param<uint64_t>(l, 0), src = param<uint64_t>(l, 1), n = param<uint64_t>(l, 2);
    if (!l.host(dst, n * 16) || !l.host(src, n * 16)) return -1;
    const Lazy* s = exact(src, n * 16);
    if (s && !s->memtest && l.bad_cells(src, n * 16).empty()) {
        Lazy d = *s;
        produce(l, dst, n * 16, d, [](char*) {});
    } else {
        std::vector<uint32_t> tmp(n * 4);
        std::memcpy(tmp.data(), real(l, src, n * 16), n * 16);
        lazy_forget(dst, n * 16);
        char* h = real(l, dst, n * 16);
        std::memcpy(h, tmp.data(), n * 16);
        flip_cells(l, dst, n * 16, h);
    }
    return mem_ns(l, 32.0 * n);
}

double stream_triad(const KernelLaunch& l) {
    uint64_t a = param<uint64_t>(l, 0), b = param<uint64_t>(l, 1), c = param<uint64_t>(l, 2);
    float s = param<float>(l, 3);
    uint64_t n = param<uint64_t>(l, 4);
    if (!l.host(a, n * 16) || !l.host(b, n * 16) || !l.host(c, n * 16)) return -1;
    const Lazy *lb = exact(b, n * 16), *lc = exact(c, n * 16);
    if (lb && lc && !lb->memtest && !lc->memtest && l.bad_cells(b, n * 16).empty() && l.bad_cells(c, n * 16).empty()) {
        Lazy d;
        d.value = std::bit_cast<uint32_t>(
            ref::triad_value(s, std::bit_cast<float>(lb->value), std::bit_cast<float>(lc->value)));
        produce(l, a, n * 16, d, [&](char* h) {
            auto* w = reinterpret_cast<uint32_t*>(h);
            std::fill(w, w + n * 4, d.value);
        });
    } else {
        std::vector<float> fb(n * 4), fc(n * 4);
        std::memcpy(fb.data(), real(l, b, n * 16), n * 16);
        std::memcpy(fc.data(), real(l, c, n * 16), n * 16);
        lazy_forget(a, n * 16);
        char* h = real(l, a, n * 16);
        ref::stream_triad({reinterpret_cast<float*>(h), n * 4}, fb, fc, s);
        flip_cells(l, a, n * 16, h);
    }
    return mem_ns(l, 48.0 * n);
}

// A description's u32 word at byte offset `off` of a buffer at `ptr`, with bad cells applied.
uint32_t lazy_word(const Lazy& d, uint64_t ptr, uint64_t off, uint64_t flip) {
    uint64_t w8;
    if (d.memtest) {
        uint64_t i = (off & ~7ull) / 8;
        w8 = ref::memtest_pattern(static_cast<ref::MemtestPattern>(d.kind), ptr + 8 * i, i, d.seed);
    } else {
        w8 = (uint64_t{d.value} << 32) | d.value;
    }
    w8 ^= flip;
    return static_cast<uint32_t>(off % 8 ? w8 >> 32 : w8);
}

double stream_read(const KernelLaunch& l) {
    uint64_t src = param<uint64_t>(l, 0), n = param<uint64_t>(l, 1), out = param<uint64_t>(l, 2);
    uint64_t T = threads(l);
    auto* partial = static_cast<uint32_t*>(l.host(out, T * 4));
    if (!l.host(src, n * 16) || !partial) return -1;
    const Lazy* d = exact(src, n * 16);
    if (d && !d->memtest) {
        for (uint64_t g = 0; g < T; ++g) {
            uint64_t owned = n > g ? (n - 1 - g) / T + 1 : 0;
            partial[g] = static_cast<uint32_t>(owned * 4 * d->value);
        }
        for (auto [addr, flip] : l.bad_cells(src, n * 16)) {
            uint64_t off = addr - src;
            for (uint64_t half : {off, off + 4}) {
                uint32_t was = d->value, now = lazy_word(*d, src, half, flip);
                partial[(half / 16) % T] += now - was;
            }
        }
    } else {
        auto sums = ref::stream_read_partials({reinterpret_cast<const uint32_t*>(real(l, src, n * 16)), n * 4}, T);
        std::copy(sums.begin(), sums.end(), partial);
    }
    return mem_ns(l, 16.0 * n);
}

double stream_verify(const KernelLaunch& l) {
    uint64_t buf = param<uint64_t>(l, 0), n = param<uint64_t>(l, 1);
    uint32_t expected = param<uint32_t>(l, 2);
    auto* count = static_cast<uint64_t*>(l.host(param<uint64_t>(l, 3), 8));
    if (!l.host(buf, n * 16) || !count) return -1;
    const Lazy* d = exact(buf, n * 16);
    if (d && !d->memtest) {
        uint64_t bad = d->value != expected ? n * 4 : 0;
        for (auto [addr, flip] : l.bad_cells(buf, n * 16))
            for (uint64_t half : {addr - buf, addr - buf + 4}) {
                bool was_bad = d->value != expected, now_bad = lazy_word(*d, buf, half, flip) != expected;
                bad = bad - (was_bad ? 1 : 0) + (now_bad ? 1 : 0);
            }
        *count += bad;
    } else {
        *count += ref::stream_verify({reinterpret_cast<const uint32_t*>(real(l, buf, n * 16)), n * 4}, expected);
    }
    return mem_ns(l, 16.0 * n);
}

// ---- memtest.ptx ---------------------------------------------------------------------------------
double memtest_write(const KernelLaunch& l) {
    uint64_t buf = param<uint64_t>(l, 0), n = param<uint64_t>(l, 1);
    uint32_t kind = param<uint32_t>(l, 2);
    uint64_t seed = param<uint64_t>(l, 3);
    if (!l.host(buf, n * 8)) return -1;
    Lazy d;
    d.memtest = true, d.kind = kind, d.seed = seed;
    produce(l, buf, n * 8, d, [&](char* h) {
        ref::memtest_write({reinterpret_cast<uint64_t*>(h), n}, buf, static_cast<ref::MemtestPattern>(kind), seed);
    });
    return mem_ns(l, 8.0 * n);
}

double memtest_verify(const KernelLaunch& l) {
    uint64_t buf = param<uint64_t>(l, 0), n = param<uint64_t>(l, 1);
    uint32_t kind = param<uint32_t>(l, 2);
    uint64_t seed = param<uint64_t>(l, 3), res = param<uint64_t>(l, 4);
    uint32_t max_records = param<uint32_t>(l, 5);
    uint64_t T = threads(l);
    auto* out = static_cast<uint64_t*>(l.host(res, ref::memtest_result_words(max_records) * 8));
    if (!l.host(buf, n * 8) || !out) return -1;
    ref::MemtestOutcome o;
    const Lazy* d = exact(buf, n * 8);
    if (d && d->memtest && d->kind == kind && d->seed == seed) {
        // Written with this very pattern: only the bad cells differ. First mismatch per thread.
        std::map<uint64_t, ref::MemtestRecord> first;  // thread -> record
        for (auto [addr, flip] : l.bad_cells(buf, n * 8)) {
            uint64_t i = (addr - buf) / 8;
            uint64_t want = ref::memtest_pattern(static_cast<ref::MemtestPattern>(kind), addr, i, seed);
            ++o.mismatches;
            auto [it, fresh] = first.emplace(i % T, ref::MemtestRecord{i, want ^ flip});
            if (!fresh && i < it->second.index) it->second = {i, want ^ flip};
        }
        o.records_claimed = first.size();
        for (auto& [t, rec] : first)
            if (o.records.size() < max_records) o.records.push_back(rec);
    } else {
        o = ref::memtest_verify({reinterpret_cast<const uint64_t*>(real(l, buf, n * 8)), n}, buf,
                                static_cast<ref::MemtestPattern>(kind), seed, T, max_records);
    }
    // The kernel adds to the counters and claims record slots atomically.
    uint64_t slot = out[1];
    out[0] += o.mismatches;
    out[1] += o.records_claimed;
    for (const auto& rec : o.records) {
        if (slot >= max_records) break;
        out[2 + 2 * slot] = rec.index;
        out[3 + 2 * slot] = rec.observed;
        ++slot;
    }
    return mem_ns(l, 8.0 * n);
}

// ---- fma.ptx / fma_bf16.ptx ----------------------------------------------------------------------
template <class T, class R>
double fma_kernel(const KernelLaunch& l, double tflops, int lanes, R result) {
    uint64_t T_ = threads(l);
    uint32_t it = param<uint32_t>(l, 1);
    auto* out = static_cast<T*>(l.host(param<uint64_t>(l, 0), T_ * sizeof(T)));
    if (!out) return -1;
    T v = result(it);
    if (l.gpu->fma_wrong_results) v = static_cast<T>(v + 1);  // plausible but wrong (float: +1, packed: low lane bits)
    std::fill(out, out + T_, v);
    return ref::fma_flops(T_, it, lanes) / (tflops * 1e3);  // FLOP / (TFLOP/s) in ns
}
double fma_f64(const KernelLaunch& l) {
    return fma_kernel<double>(l, l.gpu->fp64_tflops, 1, [&](uint32_t it) {
        return ref::fma_f64_result(it, param<double>(l, 2), param<double>(l, 3), param<double>(l, 4));
    });
}
double fma_f32(const KernelLaunch& l) {
    return fma_kernel<float>(l, l.gpu->fp32_tflops, 1, [&](uint32_t it) {
        return ref::fma_f32_result(it, param<float>(l, 2), param<float>(l, 3), param<float>(l, 4));
    });
}
double fma_f16x2(const KernelLaunch& l) {
    return fma_kernel<uint32_t>(l, l.gpu->fp16_tflops, 2, [&](uint32_t it) {
        return ref::fma_f16x2_result(it, param<uint32_t>(l, 2), param<uint32_t>(l, 3), param<uint32_t>(l, 4));
    });
}
double fma_bf16x2(const KernelLaunch& l) {
    return fma_kernel<uint32_t>(l, l.gpu->bf16_tflops, 2, [&](uint32_t it) {
        return ref::fma_bf16x2_result(it, param<uint32_t>(l, 2), param<uint32_t>(l, 3), param<uint32_t>(l, 4));
    });
}

// ---- burn_check.ptx ------------------------------------------------------------------------------
template <class E>
double burn_compare(const KernelLaunch& l) {
    uint64_t a = param<uint64_t>(l, 0), b = param<uint64_t>(l, 1), n = param<uint64_t>(l, 2);
    float abs_tol = param<float>(l, 3), rel_tol = param<float>(l, 4);
    auto* out = static_cast<uint64_t*>(l.host(param<uint64_t>(l, 5), 16));
    if (!l.host(a, n * sizeof(E)) || !l.host(b, n * sizeof(E)) || !out) return -1;
    const auto* pa = reinterpret_cast<const E*>(real(l, a, n * sizeof(E)));
    const auto* pb = reinterpret_cast<const E*>(real(l, b, n * sizeof(E)));
    ref::CompareCounts c;
    if constexpr (sizeof(E) == 4) c = ref::burn_compare_f32({pa, n}, {pb, n}, abs_tol, rel_tol);
    else c = ref::burn_compare_f16({pa, n}, {pb, n}, abs_tol, rel_tol);
    out[0] += c.mismatches;
    out[1] += c.nans;
    return mem_ns(l, 2.0 * sizeof(E) * n);
}

const bool registered = [] {
    auto& r = kernel_registry();
    r["stream_write"] = stream_write;
    r["stream_copy"] = stream_copy;
    r["stream_triad"] = stream_triad;
    r["stream_read"] = stream_read;
    r["stream_verify"] = stream_verify;
    r["memtest_write"] = memtest_write;
    r["memtest_verify"] = memtest_verify;
    r["fma_f64"] = fma_f64;
    r["fma_f32"] = fma_f32;
    r["fma_f16x2"] = fma_f16x2;
    r["fma_bf16x2"] = fma_bf16x2;
    r["burn_compare_f32"] = burn_compare<float>;
    r["burn_compare_f16"] = burn_compare<uint16_t>;
    return true;
}();

}  // namespace

void lazy_materialize(const KernelLaunch& env, uint64_t ptr, uint64_t bytes) {
    auto& m = lazies();
    auto it = m.lower_bound(ptr + bytes);
    while (it != m.begin()) {
        --it;
        if (it->first + it->second.bytes <= ptr) break;  // descriptions never overlap each other
        if (char* h = static_cast<char*>(env.host(it->first, it->second.bytes))) write_desc(env, it->first, it->second, h);
        it = m.erase(it);
    }
}

void lazy_forget(uint64_t ptr, uint64_t bytes) {
    auto& m = lazies();
    auto it = m.lower_bound(ptr + bytes);
    while (it != m.begin()) {
        --it;
        if (it->first + it->second.bytes <= ptr) break;
        it = m.erase(it);
    }
}

}  // namespace fake
