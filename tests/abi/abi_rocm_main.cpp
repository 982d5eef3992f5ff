// The ROCm conformance checks are static_asserts in abi_rocm.cpp and abi_amd_smi.cpp: this binary
// exists only if they all held. At run time it compares the AMD SMI function types, which the
// recorded facts hold as text.
#include <cstdio>

int check_amd_smi_runtime();

int main() {
    int failures = check_amd_smi_runtime();
    if (failures) std::fprintf(stderr, "%d ABI run-time check(s) failed\n", failures);
    else std::puts("ABI conformance: gpuvet's AMD SMI, ROCm SMI and HIP declarations match the vendors' headers");
    return failures ? 1 : 0;
}
