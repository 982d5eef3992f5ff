// What the GEMM check runs, independent of any GPU: the precisions (cuBLASLt types, spec figure,
// healthy fraction, tolerance), the shape sweep for a tier and free memory, the random inputs and
// the CPU reference of sampled output elements.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "gpu/bindings/cublaslt_api.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet::gemm {

enum class Precision { tf32, fp16, bf16, fp8, int8 };

struct PrecisionInfo {
    Precision precision;
    const char* name;   // "bf16"
    const char* label;  // "BF16 tensor GEMM"
    const char* unit;   // "TFLOPS" or "TOPS"
    lt::cudaDataType_t ab_type, d_type, scale_type;
    lt::cublasComputeType_t compute;
    std::size_t ab_bytes, d_bytes;
    int min_cc;                // x10: 80 for 8.0 (TF32/BF16), 89 for FP8 E4M3
    double expected_fraction;  // of the dense tensor spec, healthy best shape
    double warn_fraction, fail_fraction;
    // Tolerance: |got - ref| <= rel_out * |ref| + rel_acc * sum_k |a_ik * b_kj|. Zero: exact.
    double rel_out, rel_acc;
};

const std::vector<PrecisionInfo>& precisions();
std::optional<double> spec_rate(const GpuSpec& spec, Precision p);  // dense tensor TFLOPS/TOPS

struct Shape {
    std::uint64_t m, n, k;
    double flops() const { return 2.0 * double(m) * double(n) * double(k); }
    std::string text() const;  // "8192x8192x8192"
};

// Shapes for the tier whose A, B and D fit in `budget_bytes`; largest first. Never empty when
// budget allows 1024^3; empty means not even that fits.
std::vector<Shape> sweep(Tier tier, const PrecisionInfo& p, std::uint64_t budget_bytes);
std::uint64_t bytes_needed(const Shape& s, const PrecisionInfo& p);

// Random inputs: a tile of `tile_elements` random, exactly representable values of the input
// type (never zero), repeated over the matrix. The tile length is odd so rows never repeat.
struct InputTile {
    std::vector<std::uint8_t> bytes;  // tile_elements * ab_bytes
    std::size_t elements = 0;
    double value(std::size_t matrix_index) const;  // the element's exact value
    Precision precision;
};
InputTile random_tile(const PrecisionInfo& p, std::size_t elements, std::uint64_t seed);

// cuBLASLt's "TN" form, the one FP8 and INT8 need: op(A) = A^T with A stored K x M column-major
// (lda = K), B stored K x N (ldb = K), D stored M x N (ldd = M). D(i,j) = sum_k A[k + i*K] * B[k + j*K].
double reference(const InputTile& a, const InputTile& b, const Shape& s, std::uint64_t i, std::uint64_t j,
                 double* abs_sum);
double decode_output(const PrecisionInfo& p, const std::uint8_t* bytes);  // one D element
double fp8_e4m3_value(std::uint8_t bits);

struct Sample {
    std::uint64_t i, j;
};
std::vector<Sample> sample_positions(const Shape& s, std::size_t count, std::uint64_t seed);

struct Mismatch {
    std::uint64_t i, j;
    double got, expected, allowed;
};
// The CPU reference of sampled outputs and the error each may have, computed once: a burn checks
// the same positions after every batch.
struct Expected {
    Sample at;
    double value, allowed;
};
std::vector<Expected> expected_values(const PrecisionInfo& p, const InputTile& a, const InputTile& b, const Shape& s,
                                      const std::vector<Sample>& where);
// got[n] is the output at expected[n].at; returns the mismatches (NaN never matches).
std::vector<Mismatch> compare(const std::vector<Expected>& expected, const std::vector<double>& got);
// Compares sampled outputs; returns the mismatches (empty when all agree).
std::vector<Mismatch> verify(const PrecisionInfo& p, const InputTile& a, const InputTile& b, const Shape& s,
                             const std::vector<Sample>& where, const std::vector<double>& got);

}  // namespace gpuvet::gemm
