#include "gpu/gemm_plan.hpp"

#include <cmath>
#include <cstring>
#include <random>

#include "gpu/small_float.hpp"

namespace gpuvet::gemm {

using namespace lt;

const std::vector<PrecisionInfo>& precisions() {
    // Healthy fractions: best-shape BF16 GEMM reaches 73-87% of the dense spec and FP8 70-78%
    // (mamf-finder results, REFERENCES.md). FP16 shares BF16's tensor path; TF32 and INT8 have no
    // published survey, so they take BF16's and FP8's figures respectively.
    static const std::vector<PrecisionInfo> p = {
        {Precision::tf32, "tf32", "TF32 tensor GEMM", "TFLOPS", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
         CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80, 0.80, 0.70, 0.55, 1e-6, 2e-3},
        {Precision::fp16, "fp16", "FP16 tensor GEMM", "TFLOPS", CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
         2, 2, 70, 0.80, 0.70, 0.55, 2e-3, 1e-4},
        {Precision::bf16, "bf16", "BF16 tensor GEMM", "TFLOPS", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,
         CUBLAS_COMPUTE_32F, 2, 2, 80, 0.80, 0.70, 0.55, 8e-3, 1e-4},
        {Precision::fp8, "fp8", "FP8 (E4M3) tensor GEMM", "TFLOPS", CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F,
         CUBLAS_COMPUTE_32F, 1, 4, 89, 0.74, 0.65, 0.50, 1e-6, 2e-3},
        {Precision::int8, "int8", "INT8 tensor GEMM", "TOPS", CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1,
         4, 75, 0.74, 0.65, 0.50, 0, 0},
    };
    return p;
}

std::optional<double> spec_rate(const GpuSpec& s, Precision p) {
    switch (p) {
        case Precision::tf32: return s.tf32_tensor_tflops;
        case Precision::fp16: return s.fp16_tensor_tflops;
        case Precision::bf16: return s.bf16_tensor_tflops;
        case Precision::fp8: return s.fp8_tensor_tflops;
        case Precision::int8: return s.int8_tensor_tops;
    }
    return std::nullopt;
}

std::string Shape::text() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }

std::uint64_t bytes_needed(const Shape& s, const PrecisionInfo& p) {
    return (s.m * s.k + s.k * s.n) * p.ab_bytes + s.m * s.n * p.d_bytes;
}

std::vector<Shape> sweep(Tier tier, const PrecisionInfo& p, std::uint64_t budget) {
    // Square shapes and the non-square ones LLM layers use, 4096..16384 (as mamf-finder sweeps).
    std::vector<Shape> c = {{8192, 8192, 8192}, {4096, 4096, 4096}};
    if (tier != Tier::Quick) {
        c.insert(c.begin(), {{12288, 12288, 12288}, {16384, 8192, 4096}, {4096, 16384, 8192}});
        c.push_back({6144, 6144, 6144});
    }
    if (tier == Tier::Full) c.insert(c.begin(), {{16384, 16384, 16384}, {16384, 16384, 8192}, {8192, 8192, 16384}});
    std::vector<Shape> out;
    for (const auto& s : c)
        if (bytes_needed(s, p) <= budget) out.push_back(s);
    // Little memory (a small GPU or a busy one): fall back to smaller squares, still measured.
    for (std::uint64_t d : {2048u, 1024u})
        if (out.empty() && bytes_needed({d, d, d}, p) <= budget) out.push_back({d, d, d});
    return out;
}

double fp8_e4m3_value(std::uint8_t b) {
    int sign = b >> 7, e = (b >> 3) & 0xF, m = b & 7;
    if (e == 15 && m == 7) return NAN;
    double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
    return sign ? -v : v;
}

namespace {

double decode(Precision p, const std::uint8_t* b) {
    switch (p) {
        case Precision::tf32: {
            float f;
            std::memcpy(&f, b, 4);
            return f;
        }
        case Precision::fp16:
        case Precision::bf16: {
            std::uint16_t u;
            std::memcpy(&u, b, 2);
            return small_float::to_double(p == Precision::fp16 ? small_float::Format::f16 : small_float::Format::bf16,
                                          u);
        }
        case Precision::fp8: return fp8_e4m3_value(*b);
        case Precision::int8: return static_cast<std::int8_t>(*b);
    }
    return 0;
}

}  // namespace

double InputTile::value(std::size_t idx) const {
    std::size_t w = bytes.size() / elements;
    return decode(precision, bytes.data() + (idx % elements) * w);
}

InputTile random_tile(const PrecisionInfo& p, std::size_t elements, std::uint64_t seed) {
    InputTile t;
    t.precision = p.precision;
    t.elements = elements | 1;  // odd
    t.bytes.resize(t.elements * p.ab_bytes);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0625, 1.0);
    for (std::size_t i = 0; i < t.elements; ++i) {
        std::uint8_t* dst = t.bytes.data() + i * p.ab_bytes;
        bool neg = rng() & 1;
        double v = neg ? -u(rng) : u(rng);  // |v| in [1/16, 1): never zero, never tiny
        switch (p.precision) {
            case Precision::tf32: {
                float f = static_cast<float>(v);
                std::memcpy(dst, &f, 4);
                break;
            }
            case Precision::fp16:
            case Precision::bf16: {
                auto f = p.precision == Precision::fp16 ? small_float::Format::f16 : small_float::Format::bf16;
                std::uint16_t h = small_float::from_double(f, v);
                std::memcpy(dst, &h, 2);
                break;
            }
            case Precision::fp8:  // exponent 4..7: |v| in [1/8, 1.875]
                *dst = static_cast<std::uint8_t>((neg ? 0x80 : 0) | ((4 + rng() % 4) << 3) | (rng() % 8));
                break;
            case Precision::int8: {
                int x = 1 + static_cast<int>(rng() % 127);
                *dst = static_cast<std::uint8_t>(static_cast<std::int8_t>(neg ? -x : x));
                break;
            }
        }
    }
    return t;
}

double reference(const InputTile& a, const InputTile& b, const Shape& s, std::uint64_t i, std::uint64_t j,
                 double* abs_sum) {
    double sum = 0, abs = 0;
    for (std::uint64_t k = 0; k < s.k; ++k) {
        double x = a.value(k + i * s.k) * b.value(k + j * s.k);
        sum += x;
        abs += std::fabs(x);
    }
    if (abs_sum) *abs_sum = abs;
    return sum;
}

double decode_output(const PrecisionInfo& p, const std::uint8_t* b) {
    switch (p.d_type) {
        case CUDA_R_32F: {
            float f;
            std::memcpy(&f, b, 4);
            return f;
        }
        case CUDA_R_32I: {
            std::int32_t x;
            std::memcpy(&x, b, 4);
            return x;
        }
        case CUDA_R_16F: return decode(Precision::fp16, b);
        case CUDA_R_16BF: return decode(Precision::bf16, b);
        default: return NAN;
    }
}

std::vector<Sample> sample_positions(const Shape& s, std::size_t count, std::uint64_t seed) {
    std::vector<Sample> v = {{0, 0}, {s.m - 1, s.n - 1}, {0, s.n - 1}, {s.m - 1, 0}};
    std::mt19937_64 rng(seed);
    while (v.size() < count) v.push_back({rng() % s.m, rng() % s.n});
    return v;
}

std::vector<Expected> expected_values(const PrecisionInfo& p, const InputTile& a, const InputTile& b, const Shape& s,
                                      const std::vector<Sample>& where) {
    std::vector<Expected> out;
    for (const auto& w : where) {
        double abs_sum = 0;
        double ref = reference(a, b, s, w.i, w.j, &abs_sum);
        out.push_back({w, ref, p.rel_out * std::fabs(ref) + p.rel_acc * abs_sum});
    }
    return out;
}

std::vector<Mismatch> compare(const std::vector<Expected>& expected, const std::vector<double>& got) {
    std::vector<Mismatch> bad;
    for (std::size_t n = 0; n < expected.size() && n < got.size(); ++n) {
        const Expected& e = expected[n];
        if (!(std::fabs(got[n] - e.value) <= e.allowed)) bad.push_back({e.at.i, e.at.j, got[n], e.value, e.allowed});
    }
    return bad;
}

std::vector<Mismatch> verify(const PrecisionInfo& p, const InputTile& a, const InputTile& b, const Shape& s,
                             const std::vector<Sample>& where, const std::vector<double>& got) {
    return compare(expected_values(p, a, b, s, where), got);
}

}  // namespace gpuvet::gemm
