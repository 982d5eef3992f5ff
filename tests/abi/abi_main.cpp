// The conformance checks are static_asserts in abi_cuda.cpp and abi_nvml.cpp: this binary exists
// only if they all held. At run time it also checks the version constants are nonzero and encode
// the struct size, which a wrong static_assert could not hide.
#include <cstdio>

int check_nvml_runtime();

int main() {
    int failures = check_nvml_runtime();
    if (failures) std::fprintf(stderr, "%d ABI run-time check(s) failed\n", failures);
    else std::puts("ABI conformance: gpuvet's CUDA and NVML declarations match the official headers");
    return failures ? 1 : 0;
}
