// memtest.cl - write and verify test patterns over device memory, 8-byte words, for AMD GPUs.
//
// The same contracts as memtest.ptx (docs/kernels.md); kernel_reference.hpp computes the same.
//
// memtest_write (buf, n_words, kind, seed)
//   Word i of buf (i < n_words) = pattern(address of word i, i, kind, seed).
// memtest_verify(buf, n_words, kind, seed, result, max_records)
//   Compares every word with the same pattern. result (u64 words, zeroed by the host, 2 + 2 *
//   max_records long): result[0] += mismatching words; result[1] += records claimed (each
//   work-item records its first mismatch only); record k (k < max_records) is the word index at
//   result[2 + 2k] and the value read at result[3 + 2k].
//
// pattern(addr, i, kind, seed), addr being the device address of word i (the hipMalloc pointer
// plus 8 * i): 0 address, 1 ~address, 2 walking ones 1 << ((i + seed) mod 64), 3 walking zeros
// ~(1 << ((i + seed) mod 64)), 4 random splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15),
// 5 ~random, anything else solid (seed). 1-D grid-stride loops; any shape works.

static ulong memtest_pattern(ulong addr, ulong i, uint kind, ulong seed) {
    switch (kind) {
        case 0: return addr;
        case 1: return ~addr;
        case 2: return 1ul << ((i + seed) & 63);
        case 3: return ~(1ul << ((i + seed) & 63));
        case 4:
        case 5: {
            ulong z = seed + (i + 1) * 0x9E3779B97F4A7C15ul;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ul;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBul;
            z = z ^ (z >> 31);
            return kind == 4 ? z : ~z;
        }
        default: return seed;
    }
}

__kernel void memtest_write(__global ulong* buf, ulong n_words, uint kind, ulong seed) {
    const ulong t = get_global_size(0);
    for (ulong i = get_global_id(0); i < n_words; i += t) buf[i] = memtest_pattern((ulong)(buf + i), i, kind, seed);
}

__kernel void memtest_verify(__global const ulong* buf, ulong n_words, uint kind, ulong seed, __global ulong* result,
                             uint max_records) {
    const ulong t = get_global_size(0);
    ulong bad = 0;
    for (ulong i = get_global_id(0); i < n_words; i += t) {
        const ulong v = buf[i];
        if (v == memtest_pattern((ulong)(buf + i), i, kind, seed)) continue;
        if (bad++ == 0) {  // this work-item's first mismatch: claim a record
            const ulong k = __atomic_fetch_add(result + 1, 1ul, __ATOMIC_RELAXED);
            if (k < max_records) {
                result[2 + 2 * k] = i;
                result[3 + 2 * k] = v;
            }
        }
    }
    if (bad) __atomic_fetch_add(result, bad, __ATOMIC_RELAXED);
}
