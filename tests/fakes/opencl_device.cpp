#include "opencl_device.hpp"

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

namespace fake::opencl {
namespace {

struct Device {
    cl_device_id dev = nullptr;
    cl_context ctx = nullptr;
    cl_command_queue q = nullptr;
    std::string error;
    Device() {
        cl_uint n = 0;
        cl_platform_id plats[8];
        if (clGetPlatformIDs(8, plats, &n) != CL_SUCCESS || n == 0) {
            error = "no OpenCL platform (install pocl-opencl-icd and ocl-icd-libopencl1)";
            return;
        }
        for (cl_uint i = 0; i < n && !dev; ++i)
            if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_CPU, 1, &dev, nullptr) != CL_SUCCESS) dev = nullptr;
        if (!dev) {
            error = "no OpenCL CPU device (install pocl-opencl-icd)";
            return;
        }
        cl_device_svm_capabilities svm = 0;
        clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr);
        if (!(svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER)) {
            error = "the OpenCL CPU device has no fine-grained shared virtual memory";
            return;
        }
        cl_int rc = CL_SUCCESS;
        ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &rc);
        if (rc == CL_SUCCESS) q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
        if (rc != CL_SUCCESS) error = "OpenCL context or queue: error " + std::to_string(rc);
    }
};

Device& device() {
    static Device d;
    return d;
}
std::mutex& run_mutex() {
    static std::mutex m;
    return m;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

struct Kernels::Built {
    std::string path;
    cl_program program = nullptr;
    std::vector<std::string> kernels;
};

std::string unavailable_reason() { return device().error; }

void* svm_alloc(std::size_t bytes) {
    Device& d = device();
    if (!d.error.empty() || bytes == 0) return nullptr;
    return clSVMAlloc(d.ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, bytes, 128);
}

void svm_free(void* p) {
    if (p) clSVMFree(device().ctx, p);
}

std::string Kernels::build_all() {
    if (built_) return build_error_;
    built_ = true;
    Device& d = device();
    if (!d.error.empty()) return build_error_ = d.error;
    std::vector<std::string> files;
    if (DIR* dir = opendir(dir_.c_str())) {
        while (dirent* e = readdir(dir)) {
            std::string n = e->d_name;
            if (n.size() > 3 && n.compare(n.size() - 3, 3, ".cl") == 0) files.push_back(dir_ + "/" + n);
        }
        closedir(dir);
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) return build_error_ = "no .cl kernel sources in " + dir_;
    for (const auto& path : files) {
        std::string src = read_file(path);
        const char* text = src.c_str();
        cl_int rc = CL_SUCCESS;
        auto b = std::make_shared<Built>();
        b->path = path;
        b->program = clCreateProgramWithSource(d.ctx, 1, &text, nullptr, &rc);
        if (rc == CL_SUCCESS) rc = clBuildProgram(b->program, 1, &d.dev, "-cl-std=CL3.0 -Werror", nullptr, nullptr);
        if (rc != CL_SUCCESS) {
            std::string log(1 << 16, '\0');
            std::size_t n = 0;
            clGetProgramBuildInfo(b->program, d.dev, CL_PROGRAM_BUILD_LOG, log.size() - 1, log.data(), &n);
            log.resize(n ? n - 1 : 0);
            return build_error_ = path + " does not build (OpenCL error " + std::to_string(rc) + "): " + log;
        }
        std::string names(4096, '\0');
        std::size_t n = 0;
        clGetProgramInfo(b->program, CL_PROGRAM_KERNEL_NAMES, names.size() - 1, names.data(), &n);
        names.resize(n ? n - 1 : 0);
        std::stringstream ss(names);
        for (std::string k; std::getline(ss, k, ';');)
            if (!k.empty()) b->kernels.push_back(k);
        programs_.push_back(b);
    }
    return build_error_;
}

std::vector<std::string> Kernels::names() {
    std::lock_guard lock(run_mutex());
    std::vector<std::string> out;
    if (!build_all().empty()) return out;
    for (const auto& p : programs_) out.insert(out.end(), p->kernels.begin(), p->kernels.end());
    return out;
}

std::string Kernels::run(const std::string& name, std::size_t global, std::size_t local, const std::vector<Arg>& args) {
    std::lock_guard lock(run_mutex());
    if (std::string e = build_all(); !e.empty()) return e;
    cl_program prog = nullptr;
    for (const auto& p : programs_)
        if (std::find(p->kernels.begin(), p->kernels.end(), name) != p->kernels.end()) prog = p->program;
    if (!prog) return "no kernel " + name + " in the sources in " + dir_;
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCreateKernel(prog, name.c_str(), &rc);
    if (rc != CL_SUCCESS) return "clCreateKernel(" + name + "): error " + std::to_string(rc);
    cl_uint nargs = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr);
    std::string err;
    if (nargs != args.size())
        err = name + " takes " + std::to_string(nargs) + " arguments, given " + std::to_string(args.size());
    for (cl_uint i = 0; err.empty() && i < args.size(); ++i) {
        const Arg& a = args[i];
        rc = a.pointer ? clSetKernelArgSVMPointer(k, i, a.value) : clSetKernelArg(k, i, a.bytes, a.value);
        if (rc != CL_SUCCESS)
            err = name + ": argument " + std::to_string(i) + " refused (error " + std::to_string(rc) + ")";
    }
    Device& d = device();
    if (err.empty()) {
        const std::size_t g[1] = {global}, l[1] = {local};
        rc = clEnqueueNDRangeKernel(d.q, k, 1, nullptr, g, l, 0, nullptr, nullptr);
        if (rc == CL_SUCCESS) rc = clFinish(d.q);
        if (rc != CL_SUCCESS) err = name + ": launch failed (OpenCL error " + std::to_string(rc) + ")";
    }
    clReleaseKernel(k);
    return err;
}

}  // namespace fake::opencl
