// stream.cl - device memory bandwidth kernels (STREAM-like), 16-byte accesses, for AMD GPUs.
//
// The same contracts as stream.ptx (docs/kernels.md), so kernel_reference.hpp checks both. Every
// kernel is a 1-D grid-stride loop over n_vec 16-byte vectors: work-item g handles vectors
// g, g+T, g+2T... where T is the global size. Any 1-D shape works; amd_kernels.cpp suggests
// work-groups of 256 and CUs x 8 groups. Buffers hold n_vec*16 bytes, 16-byte aligned.
//
// stream_copy(dst, src, n_vec)          dst[i] = src[i]. Bytes per launch: 32 * n_vec.
// stream_read(src, n_vec, partial)      partial[g] = sum (mod 2^32) of the u32 words of g's vectors
//                                       (partial holds T words). Bytes counted: 16 * n_vec.
// stream_write(dst, n_vec, value)       every u32 word = value. Bytes: 16 * n_vec.
// stream_triad(a, b, c, s, n_vec)       a[k] = fma(s, c[k], b[k]) per float (one rounding).
//                                       Bytes: 48 * n_vec.
// stream_verify(buf, n_vec, expected, count)
//                                       adds the number of u32 words != expected to the u64 at
//                                       count (one atomic per work-item that saw any).

__kernel void stream_copy(__global uint4* dst, __global const uint4* src, ulong n_vec) {
    const ulong t = get_global_size(0);
    for (ulong i = get_global_id(0); i < n_vec; i += t) dst[i] = src[i];
}

__kernel void stream_read(__global const uint4* src, ulong n_vec, __global uint* partial) {
    const ulong t = get_global_size(0), g = get_global_id(0);
    uint sum = 0;
    for (ulong i = g; i < n_vec; i += t) {
        const uint4 v = src[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    partial[g] = sum;
}

__kernel void stream_write(__global uint4* dst, ulong n_vec, uint value) {
    const ulong t = get_global_size(0);
    const uint4 v = (uint4)(value);
    for (ulong i = get_global_id(0); i < n_vec; i += t) dst[i] = v;
}

__kernel void stream_triad(__global float4* a, __global const float4* b, __global const float4* c, float s,
                           ulong n_vec) {
    const ulong t = get_global_size(0);
    for (ulong i = get_global_id(0); i < n_vec; i += t) {
        const float4 x = c[i], y = b[i];
        a[i] = (float4)(__builtin_fmaf(s, x.x, y.x), __builtin_fmaf(s, x.y, y.y), __builtin_fmaf(s, x.z, y.z),
                        __builtin_fmaf(s, x.w, y.w));
    }
}

__kernel void stream_verify(__global const uint4* buf, ulong n_vec, uint expected, __global ulong* count) {
    const ulong t = get_global_size(0);
    ulong bad = 0;
    for (ulong i = get_global_id(0); i < n_vec; i += t) {
        const uint4 v = buf[i];
        bad += (v.x != expected) + (v.y != expected) + (v.z != expected) + (v.w != expected);
    }
    if (bad) __atomic_fetch_add(count, bad, __ATOMIC_RELAXED);
}
