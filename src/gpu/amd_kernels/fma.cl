// fma.cl - arithmetic peak kernels for AMD GPUs: long chains of independent FMAs in registers.
//
// The same contracts as fma.ptx (docs/kernels.md), so kernel_reference.hpp checks both:
//
// fma_f64   (out, iterations, double a, double b, double x0)
// fma_f32   (out, iterations, float a, float b, float x0)
// fma_f16x2 (out, iterations, uint a, uint b, uint x0)   two packed halves, lane 0 in the low bits
//
// Each work-item keeps 8 independent chains x_0..x_7; chain j starts at x0 + j, built as
// x_j = fma(x_{j-1}, 1, 1). One iteration is 16 rounds of x_j = fma(x_j, a, b) over the 8 chains
// (128 FMAs; f16x2: 128 packed FMAs). Then sum = x_0, sum = fma(x_j, 1, sum) for j = 1..7, and
// work-item g stores sum to out[g]. Every work-item computes the same value.
// FLOPs per launch = work-items * iterations * 256 * lanes (lanes 2 for f16x2).
//
// The chains are held in pairs (two-lane vectors) so that the targets with packed FP32 FMA
// (gfx90a, gfx942: v_pk_fma_f32, which their datasheets' FP32 vector figures count) issue it,
// and FP16 pairs become v_pk_fma_f16 everywhere. Lane-wise FMAs are the same arithmetic either way.
// No BF16 kernel: none of the targets has a BF16 FMA in its vector ALU (docs/amd.md).

typedef _Float16 gpuvet_half2 __attribute__((ext_vector_type(2)));
typedef float gpuvet_float2 __attribute__((ext_vector_type(2)));
typedef double gpuvet_double2 __attribute__((ext_vector_type(2)));

// Lane-wise fma(x, a, b) of a pair: one rounding per lane.
static inline gpuvet_double2 fma_d2(gpuvet_double2 x, gpuvet_double2 a, gpuvet_double2 b) {
    return (gpuvet_double2)(__builtin_fma(x.x, a.x, b.x), __builtin_fma(x.y, a.y, b.y));
}
static inline gpuvet_float2 fma_f2(gpuvet_float2 x, gpuvet_float2 a, gpuvet_float2 b) {
    return (gpuvet_float2)(__builtin_fmaf(x.x, a.x, b.x), __builtin_fmaf(x.y, a.y, b.y));
}
static inline gpuvet_half2 fma_h2(gpuvet_half2 x, gpuvet_half2 a, gpuvet_half2 b) {
    return (gpuvet_half2)(__builtin_fmaf16(x.x, a.x, b.x), __builtin_fmaf16(x.y, a.y, b.y));
}

__kernel void fma_f64(__global double* out, uint iterations, double a, double b, double x0) {
    const double s0 = x0, s1 = __builtin_fma(s0, 1.0, 1.0), s2 = __builtin_fma(s1, 1.0, 1.0),
                 s3 = __builtin_fma(s2, 1.0, 1.0), s4 = __builtin_fma(s3, 1.0, 1.0), s5 = __builtin_fma(s4, 1.0, 1.0),
                 s6 = __builtin_fma(s5, 1.0, 1.0), s7 = __builtin_fma(s6, 1.0, 1.0);
    gpuvet_double2 c0 = (gpuvet_double2)(s0, s1), c1 = (gpuvet_double2)(s2, s3), c2 = (gpuvet_double2)(s4, s5),
                   c3 = (gpuvet_double2)(s6, s7);
    const gpuvet_double2 va = (gpuvet_double2)(a), vb = (gpuvet_double2)(b);
    for (uint it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < 16; ++r) {
            c0 = fma_d2(c0, va, vb);
            c1 = fma_d2(c1, va, vb);
            c2 = fma_d2(c2, va, vb);
            c3 = fma_d2(c3, va, vb);
        }
    }
    double sum = c0.x;
    sum = __builtin_fma(c0.y, 1.0, sum);
    sum = __builtin_fma(c1.x, 1.0, sum);
    sum = __builtin_fma(c1.y, 1.0, sum);
    sum = __builtin_fma(c2.x, 1.0, sum);
    sum = __builtin_fma(c2.y, 1.0, sum);
    sum = __builtin_fma(c3.x, 1.0, sum);
    sum = __builtin_fma(c3.y, 1.0, sum);
    out[get_global_id(0)] = sum;
}

__kernel void fma_f32(__global float* out, uint iterations, float a, float b, float x0) {
    const float s0 = x0, s1 = __builtin_fmaf(s0, 1.0f, 1.0f), s2 = __builtin_fmaf(s1, 1.0f, 1.0f),
                s3 = __builtin_fmaf(s2, 1.0f, 1.0f), s4 = __builtin_fmaf(s3, 1.0f, 1.0f),
                s5 = __builtin_fmaf(s4, 1.0f, 1.0f), s6 = __builtin_fmaf(s5, 1.0f, 1.0f),
                s7 = __builtin_fmaf(s6, 1.0f, 1.0f);
    gpuvet_float2 c0 = (gpuvet_float2)(s0, s1), c1 = (gpuvet_float2)(s2, s3), c2 = (gpuvet_float2)(s4, s5),
                  c3 = (gpuvet_float2)(s6, s7);
    const gpuvet_float2 va = (gpuvet_float2)(a), vb = (gpuvet_float2)(b);
    for (uint it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < 16; ++r) {
            c0 = fma_f2(c0, va, vb);
            c1 = fma_f2(c1, va, vb);
            c2 = fma_f2(c2, va, vb);
            c3 = fma_f2(c3, va, vb);
        }
    }
    float sum = c0.x;
    sum = __builtin_fmaf(c0.y, 1.0f, sum);
    sum = __builtin_fmaf(c1.x, 1.0f, sum);
    sum = __builtin_fmaf(c1.y, 1.0f, sum);
    sum = __builtin_fmaf(c2.x, 1.0f, sum);
    sum = __builtin_fmaf(c2.y, 1.0f, sum);
    sum = __builtin_fmaf(c3.x, 1.0f, sum);
    sum = __builtin_fmaf(c3.y, 1.0f, sum);
    out[get_global_id(0)] = sum;
}

__kernel void fma_f16x2(__global uint* out, uint iterations, uint a, uint b, uint x0) {
    const gpuvet_half2 one = (gpuvet_half2)((_Float16)1.0f), va = __builtin_astype(a, gpuvet_half2),
                       vb = __builtin_astype(b, gpuvet_half2);
    gpuvet_half2 h0 = __builtin_astype(x0, gpuvet_half2), h1 = fma_h2(h0, one, one), h2 = fma_h2(h1, one, one),
                 h3 = fma_h2(h2, one, one), h4 = fma_h2(h3, one, one), h5 = fma_h2(h4, one, one),
                 h6 = fma_h2(h5, one, one), h7 = fma_h2(h6, one, one);
    for (uint it = 0; it < iterations; ++it) {
#pragma unroll
        for (int r = 0; r < 16; ++r) {
            h0 = fma_h2(h0, va, vb);
            h1 = fma_h2(h1, va, vb);
            h2 = fma_h2(h2, va, vb);
            h3 = fma_h2(h3, va, vb);
            h4 = fma_h2(h4, va, vb);
            h5 = fma_h2(h5, va, vb);
            h6 = fma_h2(h6, va, vb);
            h7 = fma_h2(h7, va, vb);
        }
    }
    gpuvet_half2 sum = h0;
    sum = fma_h2(h1, one, sum);
    sum = fma_h2(h2, one, sum);
    sum = fma_h2(h3, one, sum);
    sum = fma_h2(h4, one, sum);
    sum = fma_h2(h5, one, sum);
    sum = fma_h2(h6, one, sum);
    sum = fma_h2(h7, one, sum);
    out[get_global_id(0)] = __builtin_astype(sum, uint);
}
