// The ROCm conformance checks are static_asserts in abi_rocm.cpp and abi_amd_smi.cpp: this binary
// exists only if they all held. At run time it compares the AMD SMI function types, which the
// recorded facts hold as text, and the hipBLASLt ones (abi_hipblaslt.cpp).
#include <cstdio>

int check_amd_smi_runtime();
int check_hipblaslt_runtime();

int main() {
    int failures = check_amd_smi_runtime() + check_hipblaslt_runtime();
    if (failures) std::fprintf(stderr, "%d ABI run-time check(s) failed\n", failures);
    else
        std::puts(
            "ABI conformance: gpuvet's AMD SMI, ROCm SMI, HIP and hipBLASLt declarations match the vendors' headers");
    return failures ? 1 : 0;
}
