// The interpreter's contract with the rest of the fake: every shipped .entry is covered by these
// tests, PTX outside the subset is refused at load time naming the instruction and line, and a
// kernel that faults or never ends fails its launch as on a GPU instead of returning garbage.
#include <set>

#include "ptx_test_support.hpp"

namespace {

using namespace ptxtest;

TEST(PtxInterp, EveryShippedEntryIsCoveredByTheseTests) {
    std::set<std::string> covered = {"stream_copy",     "stream_read",   "stream_write",   "stream_triad",
                                     "stream_verify",   "memtest_write", "memtest_verify", "fma_f64",
                                     "fma_f32",         "fma_f16x2",     "fma_bf16x2",     "burn_compare_f32",
                                     "burn_compare_f16"};
    std::set<std::string> shipped;
    for (auto& [name, file] : shipped_entries()) shipped.insert(name);
    EXPECT_EQ(shipped, covered) << "a kernel was added or renamed: give it a test in tests/fakes/ptx/test_ptx_*.cpp";
}

std::string load_error(FakeGpu& g, const std::string& text, CUresult* rc) {
    char log[512] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
    CUmodule m = nullptr;
    *rc = g.fn<decltype(&cuModuleLoadDataEx)>("cuModuleLoadDataEx")(&m, text.c_str(), 2, opts, vals);
    return log;
}

// Sets an environment variable for one scope and puts the previous value back (the mutation
// harness runs these tests with its own GPUVET_FAKE_PTX_BUDGET).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old, had_ = true;
        setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

const std::string kHead = ".version 7.0\n.target sm_80\n.address_size 64\n";

TEST(PtxInterp, InstructionsOutsideTheSubsetAreRefusedAtLoadWithTheirLine) {
    FakeGpu g;
    CUresult rc;
    std::string err = load_error(
        g, kHead + ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<2>;\n\tbar.sync 0;\n\tret;\n}\n", &rc);
    EXPECT_EQ(rc, CUDA_ERROR_INVALID_PTX);
    EXPECT_NE(err.find("line 7"), std::string::npos) << err;
    EXPECT_NE(err.find("'bar.sync'"), std::string::npos) << err;
    err = load_error(g, kHead + ".visible .entry k()\n{\n\t.shared .b32 s;\n\tret;\n}\n", &rc);
    EXPECT_EQ(rc, CUDA_ERROR_INVALID_PTX);
    EXPECT_NE(err.find("line 6"), std::string::npos) << err;
    err = load_error(g, kHead + ".visible .entry k()\n{\n\t.reg .f32 %f<2>;\n\tcvt.rn.f16.f32 %f1, %f0;\n\tret;\n}\n",
                     &rc);
    EXPECT_NE(err.find("'cvt.rn.f16.f32'"), std::string::npos) << err;
    err = load_error(g, kHead + ".visible .entry k()\n{\n\tmov.u32 %r9, 1;\n}\n", &rc);
    EXPECT_NE(err.find("undeclared register '%r9'"), std::string::npos) << err;
}

CUresult run_one(FakeGpu& g, const std::string& body, std::vector<Arg> args) {
    CUmodule m = nullptr;
    std::string text =
        kHead + ".visible .entry k(.param .u64 p)\n{\n\t.reg .pred %p<2>;\n\t.reg .b64 %rd<4>;\n" + body + "\n}\n";
    EXPECT_EQ(g.fn<decltype(&cuModuleLoadData)>("cuModuleLoadData")(&m, text.c_str()), CUDA_SUCCESS) << text;
    CUfunction f = nullptr;
    EXPECT_EQ(g.fn<decltype(&cuModuleGetFunction)>("cuModuleGetFunction")(&f, m, "k"), CUDA_SUCCESS);
    std::vector<void*> ptrs;
    for (auto& a : args) ptrs.push_back(a.bytes.data());
    return g.fn<decltype(&cuLaunchKernel)>("cuLaunchKernel")(f, 2, 1, 1, 32, 1, 1, 0, nullptr, ptrs.data(), nullptr);
}

TEST(PtxInterp, FaultsFailTheLaunchAsOnAGpu) {
    FakeGpu g;
    CUdeviceptr d = g.alloc(64);
    const std::string st = "\tld.param.u64 %rd1, [p];\n\tst.global.u64 [%rd1+OFF], %rd1;\n\tret;";
    auto with = [&](const char* off) { return std::string(st).replace(st.find("OFF"), 3, off); };
    EXPECT_EQ(run_one(g, with("56"), {arg(d)}), CUDA_SUCCESS);
    EXPECT_EQ(run_one(g, with("64"), {arg(d)}), CUDA_ERROR_ILLEGAL_ADDRESS);  // one word past the allocation
    EXPECT_EQ(run_one(g, with("4"), {arg(d)}), CUDA_ERROR_MISALIGNED_ADDRESS);
    {
        ScopedEnv budget("GPUVET_FAKE_PTX_BUDGET", "100000");
        EXPECT_EQ(run_one(g, "LOOP:\n\tbra LOOP;", {arg(d)}), CUDA_ERROR_LAUNCH_TIMEOUT);
    }
    CUfunction f = g.function("stream_write");
    EXPECT_EQ(g.fn<decltype(&cuLaunchKernel)>("cuLaunchKernel")(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr),
              CUDA_ERROR_INVALID_VALUE);  // no kernelParams: refused, not run on garbage
}

TEST(PtxInterp, BuffersTooLargeToInterpretAreRefusedBeforeRunning) {
    FakeGpu g;
    CUdeviceptr big = g.alloc(2 << 20);
    {
        ScopedEnv limit("GPUVET_FAKE_PTX_MAX_BUFFER_BYTES", "1048576");
        EXPECT_EQ(g.launch("stream_write", {1, 32}, {arg(big), arg(uint64_t{1}), arg(0u)}),
                  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    }
    EXPECT_EQ(g.launch("stream_write", {1, 32}, {arg(big), arg(uint64_t{1}), arg(0u)}), CUDA_SUCCESS);
}

// GPUVET_FAKE_PTX_DIR: the fake loads an edited file with the same entries instead of the image
// it was given, so gpuvet end to end can run edited kernels without a rebuild.
TEST(PtxInterp, OverrideDirectoryReplacesAModuleWithTheSameEntries) {
    char dir[] = "/tmp/gpuvet-ptx-override-XXXXXX";
    ASSERT_TRUE(mkdtemp(dir));
    std::string text = read_file(ptx_dir() + "/stream.ptx");
    const std::string store = "st.global.v4.u32 \t[%rd8], {%r5, %r5, %r5, %r5};";
    size_t at = text.find("[%rd8], {%r5, %r5, %r5, %r5}");
    ASSERT_NE(at, std::string::npos) << store;
    text.replace(at, 28, "[%rd8], {%r5, %r5, %r5, %r1}");  // last word: %ctaid.x instead of the value
    const std::string path = std::string(dir) + "/edited.ptx";
    std::ofstream(path) << text;
    {
        ScopedEnv over("GPUVET_FAKE_PTX_DIR", dir);
        FakeGpu g;
        CUdeviceptr d = g.alloc(64);
        ASSERT_EQ(g.launch("stream_write", {1, 4}, {arg(d), arg(uint64_t{4}), arg(7u)}), CUDA_SUCCESS);
        auto got = g.download<uint32_t>(d, 16);
        EXPECT_EQ(got[0], 7u);
        EXPECT_EQ(got[3], 0u) << "the edited kernel did not run";
    }
    unlink(path.c_str());
    rmdir(dir);
}

}  // namespace
