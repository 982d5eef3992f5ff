// Test harness for the shipped kernels on the fake libcuda: one small GPU, the PTX files of
// src/gpu/kernels (or of $GPUVET_PTX_DIR, which the mutation harness points at edited copies)
// loaded through cuModuleLoadData, launched through cuLaunchKernel with kernelParams exactly as
// gpuvet passes them. References in these tests are written from the contracts at the top of each
// .ptx file, not from src/gpu/kernel_reference.
#pragma once
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ptxtest {

inline std::string ptx_dir() {
    const char* d = std::getenv("GPUVET_PTX_DIR");
    return d && *d ? d : PTX_SOURCE_DIR;
}
inline std::string read_file(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Arg {
    std::vector<unsigned char> bytes;
};
template <class T>
Arg arg(T v) {
    Arg a;
    a.bytes.resize(sizeof v);
    std::memcpy(a.bytes.data(), &v, sizeof v);
    return a;
}
struct Shape {
    unsigned grid, block;
};
// Grid shapes every kernel runs under: one thread, one warp, partial warps, many blocks.
inline const std::vector<Shape>& shapes() {
    static const std::vector<Shape> s = {{1, 1}, {1, 32}, {2, 64}, {5, 96}, {3, 256}, {7, 33}};
    return s;
}

class FakeGpu {
public:
    // `extra`: scenario lines appended after the one-GPU header (e.g. a [gpu.0] fault).
    explicit FakeGpu(const std::string& extra = "") {
        char path[] = "/tmp/gpuvet-ptx-test-XXXXXX";
        int fd = mkstemp(path);
        std::string text = "gpu_count = 1\n[all]\nmemory_total_mib = 1024\n" + extra;
        EXPECT_EQ(write(fd, text.data(), text.size()), ssize_t(text.size()));
        close(fd);
        scenario_ = path;
        setenv("GPUVET_FAKE_SCENARIO", path, 1);
        h_ = dlopen(FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
        if (!h_) ADD_FAILURE() << dlerror();
        reinterpret_cast<void (*)()>(sym("gpuvet_fake_cuda_reset"))();
        EXPECT_EQ(fn<decltype(&cuInit)>("cuInit")(0), CUDA_SUCCESS);
        CUcontext c = nullptr;
        EXPECT_EQ(fn<decltype(&cuDevicePrimaryCtxRetain)>("cuDevicePrimaryCtxRetain")(&c, 0), CUDA_SUCCESS);
        EXPECT_EQ(fn<decltype(&cuCtxSetCurrent)>("cuCtxSetCurrent")(c), CUDA_SUCCESS);
    }
    ~FakeGpu() {
        reinterpret_cast<void (*)()>(sym("gpuvet_fake_cuda_reset"))();
        dlclose(h_);
        unlink(scenario_.c_str());
    }
    FakeGpu(const FakeGpu&) = delete;
    FakeGpu& operator=(const FakeGpu&) = delete;

    void* sym(const char* n) const {
        void* p = h_ ? dlsym(h_, n) : nullptr;
        if (!p) ADD_FAILURE() << "missing " << n;
        return p;
    }
    template <class F>
    F fn(const char* n) const {
        return reinterpret_cast<F>(sym(n));
    }

    CUdeviceptr alloc(size_t bytes) {
        CUdeviceptr p = 0;
        EXPECT_EQ(fn<decltype(&cuMemAlloc_v2)>("cuMemAlloc_v2")(&p, bytes), CUDA_SUCCESS);
        return p;
    }
    template <class T>
    CUdeviceptr upload(const std::vector<T>& v) {
        CUdeviceptr p = alloc(std::max<size_t>(1, v.size()) * sizeof(T));
        if (!v.empty()) {
            EXPECT_EQ(fn<decltype(&cuMemcpyHtoD_v2)>("cuMemcpyHtoD_v2")(p, v.data(), v.size() * sizeof(T)),
                      CUDA_SUCCESS);
        }
        return p;
    }
    template <class T>
    std::vector<T> download(CUdeviceptr p, size_t n) {
        std::vector<T> v(n);
        if (n) {
            EXPECT_EQ(fn<decltype(&cuMemcpyDtoH_v2)>("cuMemcpyDtoH_v2")(v.data(), p, n * sizeof(T)), CUDA_SUCCESS);
        }
        return v;
    }
    // Loads (once) the module of the shipped kernels that defines `kernel`.
    CUfunction function(const std::string& kernel);
    CUresult launch(const std::string& kernel, Shape s, const std::vector<Arg>& args) {
        CUfunction f = function(kernel);
        std::vector<Arg> copy = args;
        std::vector<void*> ptrs;
        for (auto& a : copy) ptrs.push_back(a.bytes.data());
        return fn<decltype(&cuLaunchKernel)>("cuLaunchKernel")(f, s.grid, 1, 1, s.block, 1, 1, 0, nullptr, ptrs.data(),
                                                               nullptr);
    }

private:
    void* h_ = nullptr;
    std::string scenario_;
    std::map<std::string, CUmodule> modules_;     // by file
    std::map<std::string, std::string> entries_;  // kernel -> file
};

std::map<std::string, std::string> shipped_entries();

inline CUfunction FakeGpu::function(const std::string& kernel) {
    if (entries_.empty()) entries_ = shipped_entries();
    EXPECT_TRUE(entries_.count(kernel)) << kernel << " is not in " << ptx_dir();
    const std::string file = entries_[kernel];
    if (!modules_.count(file)) {
        CUmodule m = nullptr;
        std::string text = read_file(ptx_dir() + "/" + file);
        EXPECT_EQ(fn<decltype(&cuModuleLoadData)>("cuModuleLoadData")(&m, text.c_str()), CUDA_SUCCESS) << file;
        modules_[file] = m;
    }
    CUfunction f = nullptr;
    EXPECT_EQ(fn<decltype(&cuModuleGetFunction)>("cuModuleGetFunction")(&f, modules_[file], kernel.c_str()),
              CUDA_SUCCESS);
    return f;
}

// Every .entry name declared in the folder's .ptx files (a new file counts too), with its file.
inline std::map<std::string, std::string> shipped_entries() {
    std::map<std::string, std::string> out;
    std::vector<std::string> files;
    if (DIR* d = opendir(ptx_dir().c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 4 && n.compare(n.size() - 4, 4, ".ptx") == 0) files.push_back(n);
        }
        closedir(d);
    }
    EXPECT_FALSE(files.empty()) << "no .ptx files in " << ptx_dir();
    for (const std::string& file : files) {
        std::string t = read_file(ptx_dir() + "/" + file);
        for (size_t p = t.find(".entry "); p != std::string::npos; p = t.find(".entry ", p + 7)) {
            size_t e = t.find_first_of("( \n", p + 7);
            out[t.substr(p + 7, e - p - 7)] = file;
        }
    }
    return out;
}

// Deterministic test data (splitmix64 stream, seeded per test).
struct Rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

}  // namespace ptxtest
