// The burn's loads on AMD GPUs: gpuvet's own kernels from the embedded code objects through HIP
// (amd_session.hpp), the same FMA chains and STREAM copies as the CUDA loads with the same
// contracts (docs/kernels.md), every result checked against the CPU reference; the loop, the
// telemetry and the verdicts are burn.cpp's (burn_load.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "gpu/amd_session.hpp"
#include "gpu/burn.hpp"
#include "gpu/burn_load.hpp"
#include "gpu/kernel_reference.hpp"

namespace gpuvet {

namespace {

using namespace burn_detail;

struct HipFma {
    const char* kernel;
    int lanes;
    std::size_t elem_bytes;  // bytes per work-item's result
    std::string note;        // why this kernel runs for the dtype asked for
};

// The vector-unit FMA kernel of a burn dtype. Tensor GEMMs through hipBLASLt are not run: the
// compute load on AMD GPUs is always gpuvet's FMA kernels, which the notes say.
HipFma hip_fma(BurnDtype d, const std::string& gfx) {
    const std::string fma = "gpuvet's FMA kernels load the vector units (tensor GEMMs through hipBLASLt are not run)";
    switch (d) {
        case BurnDtype::fp64: return {"fma_f64", 1, 8, fma};
        case BurnDtype::fp32: return {"fma_f32", 1, 4, fma};
        case BurnDtype::tf32: return {"fma_f32", 1, 4, "TF32 exists only in matrix operations: FP32 FMA; " + fma};
        case BurnDtype::fp16: return {"fma_f16x2", 2, 4, fma};
        case BurnDtype::bf16:
            return {"fma_f16x2", 2, 4,
                    "no BF16 FMA in the vector unit of " + gfx + " (BF16 runs on the matrix cores): FP16 FMA; " + fma};
    }
    return {"fma_f32", 1, 4, fma};
}

bool is_f16_nan(std::uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

class HipFmaLoad final : public ComputeLoad {
public:
    HipFmaLoad(HipSession& s, const HipFma& k) : s_(s), k_(k) {
        geom_ = s_.geometry(k_.kernel);
        threads_ = geom_.threads();
        out_ = s_.alloc(threads_ * k_.elem_bytes);
        st_ = s_.stream();
        got_.resize(threads_ * k_.elem_bytes);
        // Calibrate: a batch of about 50 ms of GPU time keeps the GPU busy and the checks frequent.
        iterations_ = 64;
        double ms = launch_timed();
        if (ms > 0) iterations_ = std::uint32_t(std::clamp(iterations_ * 50.0 / ms, 1.0, double(1u << 24)));
        expected_ = fma_expected_word(k_.kernel, iterations_);
    }
    std::string name() const override { return "fma " + std::string(k_.kernel).substr(4); }
    std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mism, std::uint64_t& nans) override {
        double ms = launch_timed();
        check(compared, mism, nans);
        return {kernel_ref::fma_flops(threads_, iterations_, k_.lanes), ms};
    }

private:
    double launch_timed() {
        using namespace arg;
        const std::string_view kn = k_.kernel;
        const std::uint64_t out = out_.address();
        return s_.time_ms(st_, [&] {
            if (kn == "fma_f64")
                s_.launch(kn, geom_, st_, {ptr(out), u32(iterations_), f64(kFmaA), f64(kFmaB), f64(kFmaX0)});
            else if (kn == "fma_f32")
                s_.launch(kn, geom_, st_,
                          {ptr(out), u32(iterations_), f32(float(kFmaA)), f32(float(kFmaB)), f32(float(kFmaX0))});
            else
                s_.launch(kn, geom_, st_,
                          {ptr(out), u32(iterations_), b32(pair_of(kF16A)), b32(pair_of(kF16B)), b32(pair_of(kF16X0))});
        });
    }
    // Every work-item stores the same value: each one read back and compared exactly (the chain is
    // deterministic), packed halves lane by lane.
    void check(std::uint64_t& compared, std::uint64_t& mism, std::uint64_t& nans) {
        st_.synchronize();
        s_.download(got_.data(), out_, got_.size());
        const std::string_view kn = k_.kernel;
        for (std::size_t i = 0; i < threads_; ++i) {
            const unsigned char* g = &got_[i * k_.elem_bytes];
            if (kn == "fma_f64" || kn == "fma_f32") {
                double v;
                if (kn == "fma_f64") std::memcpy(&v, g, 8);
                else {
                    float f;
                    std::memcpy(&f, g, 4);
                    v = f;
                }
                if (std::isnan(v)) ++nans;
                else if (std::memcmp(g, expected_.data(), k_.elem_bytes) != 0) ++mism;
                ++compared;
                continue;
            }
            for (int lane = 0; lane < 2; ++lane) {
                std::uint16_t h, want;
                std::memcpy(&h, g + 2 * lane, 2);
                std::memcpy(&want, expected_.data() + 2 * lane, 2);
                if (is_f16_nan(h)) ++nans;
                else if (h != want) ++mism;
                ++compared;
            }
        }
    }

    HipSession& s_;
    HipFma k_;
    kernels::LaunchGeometry geom_;
    std::uint64_t threads_ = 0;
    std::uint32_t iterations_ = 0;
    HipBuffer out_;
    HipStream st_;
    std::vector<unsigned char> expected_, got_;
};

// Memory traffic: stream_copy src -> dst over most of the free memory, then stream_verify of dst.
class HipMemoryLoad final : public MemoryTraffic {
public:
    HipMemoryLoad(HipSession& s, double fraction) : s_(s) {
        auto mi = s_.mem_info();
        std::uint64_t each = std::uint64_t(double(mi.free_bytes) * fraction / 2) & ~std::uint64_t(0xFFFFF);
        if (each < (1u << 20))
            throw Error(ErrorKind::Runtime, "too little free GPU memory for the memory load",
                        "stop other processes on this GPU");
        n_vec_ = each / 16;
        src_ = s_.alloc(each);
        dst_ = s_.alloc(each);
        counts_ = s_.alloc(8);
        st_ = s_.stream();
        s_.launch("stream_write", s_.geometry("stream_write"), st_,
                  {arg::ptr(src_.address()), arg::u64(n_vec_), arg::u32(kPattern)});
        st_.synchronize();
    }
    std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mism) override {
        double ms = s_.time_ms(st_, [&] {
            s_.launch("stream_copy", s_.geometry("stream_copy"), st_,
                      {arg::ptr(dst_.address()), arg::ptr(src_.address()), arg::u64(n_vec_)});
        });
        st_.synchronize();
        s_.zero(counts_);
        s_.launch("stream_verify", s_.geometry("stream_verify"), st_,
                  {arg::ptr(dst_.address()), arg::u64(n_vec_), arg::u32(kPattern), arg::ptr(counts_.address())});
        st_.synchronize();
        std::uint64_t bad = 0;
        s_.download(&bad, counts_, 8);
        mism += bad;
        compared += n_vec_ * 4;
        // Cleared again, so a copy that stopped writing shows as mismatches in the next batch.
        s_.launch("stream_write", s_.geometry("stream_write"), st_,
                  {arg::ptr(dst_.address()), arg::u64(n_vec_), arg::u32(0)});
        return {32.0 * double(n_vec_), ms};
    }

private:
    static constexpr std::uint32_t kPattern = 0xA5C3F00Fu;
    HipSession& s_;
    std::uint64_t n_vec_ = 0;
    HipBuffer src_, dst_, counts_;
    HipStream st_;
};

}  // namespace

std::vector<CheckResult> run_burn_hip(CheckContext& ctx, const BurnOptions& opt, std::vector<GpuBurnOutcome> outcomes,
                                      const std::vector<HipSession*>& sessions, std::string_view telemetry_library) {
    auto prepare = [&](std::size_t k, const std::atomic<bool>&) {
        HipSession& s = *sessions.at(k);
        s.make_current();
        Loads loads;
        if (opt.load != BurnLoad::memory) {
            HipFma f = hip_fma(opt.dtype, s.gfx());
            loads.note = f.note;
            loads.compute = std::make_unique<HipFmaLoad>(s, f);
        }
        if (opt.load != BurnLoad::gemm) loads.memory = std::make_unique<HipMemoryLoad>(s, opt.memory_fraction);
        return loads;
    };
    auto run_parallel = [&](const std::function<void(std::size_t)>& fn) {
        std::vector<std::thread> threads;
        for (std::size_t k = 0; k < sessions.size(); ++k)
            if (sessions[k]) threads.emplace_back([&fn, k] { fn(k); });
        for (auto& t : threads) t.join();
    };
    return drive_burn(ctx, opt, std::move(outcomes), prepare, run_parallel, telemetry_library);
}

}  // namespace gpuvet
