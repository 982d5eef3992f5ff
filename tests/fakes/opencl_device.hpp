// gpuvet's AMD kernel sources (src/gpu/amd_kernels/*.cl) run on the CPU through OpenCL: PoCL's
// pthread device here (Debian: pocl-opencl-icd, through ocl-icd's libOpenCL). The same OpenCL C
// text that clang compiles into the code objects, so a wrong kernel computes a wrong result here.
// Memory is fine-grained shared virtual memory: a pointer means the same address to the host and
// to the kernels, as a HIP device pointer does to gpuvet (the memtest's address patterns depend on
// it). One device and queue per process; kernel runs are serialised.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fake::opencl {

// One kernel argument: a device pointer (into memory from svm_alloc), or `bytes` bytes of value.
struct Arg {
    bool pointer = false;
    const void* value = nullptr;  // pointer: the pointer's own value; else the bytes
    std::size_t bytes = 0;
};

// Empty when an OpenCL CPU device is usable, else why not.
std::string unavailable_reason();
void* svm_alloc(std::size_t bytes);  // nullptr when out of memory
void svm_free(void* p);

// The kernels of the .cl files in one folder, built on first use.
class Kernels {
public:
    explicit Kernels(std::string dir) : dir_(std::move(dir)) {}
    // Runs `name` over `global` work-items in groups of `local`; returns "" or what went wrong
    // (no such kernel, a build error with its log, a failed launch).
    std::string run(const std::string& name, std::size_t global, std::size_t local, const std::vector<Arg>& args);
    // Every kernel the folder's sources define.
    std::vector<std::string> names();

private:
    struct Built;
    std::string build_all();
    std::string dir_;
    std::vector<std::shared_ptr<Built>> programs_;
    bool built_ = false;
    std::string build_error_;
};

}  // namespace fake::opencl
