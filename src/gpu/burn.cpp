#include "gpu/burn.hpp"
#include "gpu/burn_load.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "gpu/gemm_run.hpp"
#include "gpu/inventory.hpp"
#include "gpu/kernel_reference.hpp"
#include "gpu/session.hpp"
#include "gpu/telemetry.hpp"
#include "gpu/device/backend_choice.hpp"
#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

namespace burn_detail {

std::vector<unsigned char> fma_expected_word(std::string_view kernel, std::uint32_t iterations) {
    std::vector<unsigned char> one(kernel == "fma_f64" ? 8 : 4);
    if (kernel == "fma_f64") {
        double x = kernel_ref::fma_f64_result(iterations, kFmaA, kFmaB, kFmaX0);
        std::memcpy(one.data(), &x, 8);
    } else if (kernel == "fma_f32") {
        float x = kernel_ref::fma_f32_result(iterations, float(kFmaA), float(kFmaB), float(kFmaX0));
        std::memcpy(one.data(), &x, 4);
    } else if (kernel == "fma_f16x2") {
        auto x = kernel_ref::fma_f16x2_result(iterations, pair_of(kF16A), pair_of(kF16B), pair_of(kF16X0));
        std::memcpy(one.data(), &x, 4);
    } else {
        auto x = kernel_ref::fma_bf16x2_result(iterations, pair_of(kBf16A), pair_of(kBf16B), pair_of(kBf16X0));
        std::memcpy(one.data(), &x, 4);
    }
    return one;
}

}  // namespace burn_detail

namespace {

using namespace burn_detail;
using Clock = std::chrono::steady_clock;

// What one load thread shares with the main thread while it runs.
struct Live {
    std::mutex mu;
    GpuBurnOutcome out;
    std::vector<double> gbps_t_s, gbps;  // memory traffic per interval (memory / mixed)
    std::atomic<double> last_rate{0};
    std::atomic<std::uint64_t> errors{0};
    std::atomic<bool> ready{false};  // set up (buffers filled, GEMM prepared), the load is running
    std::atomic<bool> done{false};
};

// Throughput is aggregated over >= 1 s of wall time per point, so a 10-minute run keeps ~600
// points however short its batches are (the driver test doubles complete batches at once).
struct Aggregator {
    double work = 0, gpu_ms = 0;
    Clock::time_point since = Clock::now();
    // Returns a rate (work units per second) once an interval is complete.
    std::optional<double> add(double w, double ms, bool flush = false) {
        work += w;
        gpu_ms += ms;
        auto now = Clock::now();
        if ((!flush && now - since < std::chrono::seconds(1)) || gpu_ms <= 0) return std::nullopt;
        double rate = work / (gpu_ms * 1e-3);
        work = gpu_ms = 0;
        since = now;
        return rate;
    }
};

struct FmaKind {
    const char* kernel;
    int lanes;
    std::size_t elem_bytes;  // bytes per thread's result
};
FmaKind fma_kind(BurnDtype d, int cc) {
    switch (d) {
        case BurnDtype::fp64: return {"fma_f64", 1, 8};
        case BurnDtype::fp32:
        case BurnDtype::tf32: return {"fma_f32", 1, 4};  // TF32 exists only in tensor GEMMs
        case BurnDtype::fp16: return {"fma_f16x2", 2, 4};
        case BurnDtype::bf16: return cc >= 80 ? FmaKind{"fma_bf16x2", 2, 4} : FmaKind{"fma_f16x2", 2, 4};
    }
    return {"fma_f32", 1, 4};
}

constexpr double kA = kFmaA, kB = kFmaB, kX0 = kFmaX0;
std::uint32_t pair(std::uint32_t h) { return pair_of(h); }

class FmaLoad final : public ComputeLoad {
public:
    FmaLoad(GpuSession& s, BurnDtype d) : s_(s), k_(fma_kind(d, s.compute_capability())) {
        geom_ = s_.geometry(k_.kernel);
        threads_ = geom_.threads();
        out_ = s_.alloc(threads_ * k_.elem_bytes);
        ref_ = s_.alloc(threads_ * k_.elem_bytes);
        counts_ = s_.alloc(16);
        st_ = s_.stream();
        // Calibrate: a batch of about 50 ms of GPU time keeps the GPU busy and the checks frequent.
        iterations_ = 64;
        double ms = launch_timed();
        if (ms > 0) iterations_ = std::uint32_t(std::clamp(iterations_ * 50.0 / ms, 1.0, double(1u << 24)));
        reference_ = expected_words();
        s_.upload(ref_.ptr(), reference_.data(), reference_.size());
    }
    std::string name() const override {
        std::string n = k_.kernel;
        return "fma " + n.substr(4);
    }
    std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mism, std::uint64_t& nans) override {
        double ms = launch_timed();
        check(compared, mism, nans);
        return {kernel_ref::fma_flops(threads_, iterations_, k_.lanes), ms};
    }

private:
    double launch_timed() {
        std::string_view kn = k_.kernel;
        return s_.time_ms(st_, [&] {
            if (kn == "fma_f64")
                s_.launch(kn, geom_, st_,
                          {arg::ptr(out_), arg::u32(iterations_), arg::f64(kA), arg::f64(kB), arg::f64(kX0)});
            else if (kn == "fma_f32")
                s_.launch(kn, geom_, st_,
                          {arg::ptr(out_), arg::u32(iterations_), arg::f32(float(kA)), arg::f32(float(kB)),
                           arg::f32(float(kX0))});
            else if (kn == "fma_f16x2")
                s_.launch(kn, geom_, st_,
                          {arg::ptr(out_), arg::u32(iterations_), arg::b32(pair(kF16A)), arg::b32(pair(kF16B)),
                           arg::b32(pair(kF16X0))});
            else
                s_.launch(kn, geom_, st_,
                          {arg::ptr(out_), arg::u32(iterations_), arg::b32(pair(kBf16A)), arg::b32(pair(kBf16B)),
                           arg::b32(pair(kBf16X0))});
        });
    }
    // Every thread stores the same value: the CPU reference, computed once.
    std::vector<unsigned char> expected_words() const {
        std::vector<unsigned char> v(threads_ * k_.elem_bytes);
        const std::vector<unsigned char> one = fma_expected_word(k_.kernel, iterations_);
        for (std::size_t i = 0; i < threads_; ++i) std::memcpy(&v[i * k_.elem_bytes], one.data(), k_.elem_bytes);
        return v;
    }
    void check(std::uint64_t& compared, std::uint64_t& mism, std::uint64_t& nans) {
        std::string_view kn = k_.kernel;
        if (kn == "fma_f64") {  // no f64 compare kernel: read back (threads x 8 bytes) and compare here
            std::vector<double> got(threads_);
            s_.download(got.data(), out_.ptr(), threads_ * 8);
            const auto* want = reinterpret_cast<const double*>(reference_.data());
            for (std::size_t i = 0; i < threads_; ++i) {
                if (std::isnan(got[i])) ++nans;
                else if (std::memcmp(&got[i], &want[i], 8) != 0) ++mism;
            }
            compared += threads_;
            return;
        }
        bool f32 = kn == "fma_f32";
        std::uint64_t n = f32 ? threads_ : threads_ * 2;  // packed: two 16-bit lanes each
        s_.zero(counts_, &st_);
        // Exact comparison: the result is deterministic, so any difference is an error.
        // (bf16 lanes are compared through the f16 kernel bit-for-bit after widening: equal bits
        // give equal values, differing bits differ, so exactness holds for either format.)
        s_.launch(f32 ? "burn_compare_f32" : "burn_compare_f16",
                  s_.geometry(f32 ? "burn_compare_f32" : "burn_compare_f16"), st_,
                  {arg::ptr(out_), arg::ptr(ref_), arg::u64(n), arg::f32(0), arg::f32(0), arg::ptr(counts_)});
        st_.synchronize();
        std::uint64_t c[2] = {0, 0};
        s_.download(c, counts_.ptr(), 16);
        mism += c[0];
        nans += c[1];
        compared += n;
    }

    GpuSession& s_;
    FmaKind k_;
    kernels::LaunchGeometry geom_;
    std::uint64_t threads_ = 0;
    std::uint32_t iterations_ = 0;
    DeviceBuffer out_, ref_, counts_;
    Stream st_;
    std::vector<unsigned char> reference_;
};

// Tensor load: one cuBLASLt GEMM shape (the largest of the quick sweep that fits), n matmuls per
// batch, then the same sampled outputs compared with their CPU reference, computed once.
class GemmLoad final : public ComputeLoad {
public:
    // `stop` is polled while the inputs are filled (throws Interrupted).
    GemmLoad(const CublasLtApi& lt, GpuSession& s, const gemm::PrecisionInfo& p, const std::atomic<bool>* stop)
        : s_(s), handle_(lt, s), st_(s.stream()) {
        auto shapes = gemm::sweep(Tier::Quick, p, gemm::budget_bytes(s.mem_info().free_bytes));
        if (shapes.empty())
            throw runtime_error("not enough free GPU memory for a 1024^3 GEMM", "stop other processes on this GPU");
        const gemm::Shape sh = shapes.front();
        const gemm::InputTile &ta = gemm::tile_a(p), &tb = gemm::tile_b(p);
        g_ = std::make_unique<gemm::PreparedGemm>(lt, handle_, s, p, sh, ta, tb, stop);
        if (!g_->has_algorithm())
            throw runtime_error(std::string("cuBLASLt has no algorithm for a ") + p.name + " GEMM of " + sh.text(),
                                "try another --dtype, or --load memory to burn without cuBLASLt");
        where_ = gemm::sample_positions(sh, kSamples, 0xB0E + sh.m);
        expected_ = gemm::expected_values(p, ta, tb, sh, where_);
        name_ = std::string("gemm ") + p.name + " " + sh.text();
        // Calibrate: a batch of about 50 ms of GPU time keeps the GPU busy and the checks frequent.
        double ms = s_.time_ms(st_, [&] { g_->enqueue(st_); });
        if (ms > 0) per_batch_ = int(std::clamp(50.0 / ms, 1.0, 10000.0));
    }
    std::string name() const override { return name_; }
    std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mism, std::uint64_t& nans) override {
        double ms = s_.time_ms(st_, [&] {
            for (int i = 0; i < per_batch_; ++i) g_->enqueue(st_);
        });
        st_.synchronize();
        std::vector<double> got = g_->read(where_);
        for (const auto& m : gemm::compare(expected_, got)) (std::isnan(m.got) ? nans : mism) += 1;
        compared += got.size();
        return {g_->shape().flops() * per_batch_, ms};
    }

private:
    static constexpr std::size_t kSamples = 32;
    GpuSession& s_;
    gemm::LtHandle handle_;
    Stream st_;
    std::unique_ptr<gemm::PreparedGemm> g_;
    std::vector<gemm::Sample> where_;
    std::vector<gemm::Expected> expected_;
    std::string name_;
    int per_batch_ = 1;
};

// The cuBLASLt precision of a burn dtype; null for fp32 / fp64 (CUDA-core FMA kernels).
const gemm::PrecisionInfo* gemm_precision(BurnDtype d) {
    const char* name = d == BurnDtype::bf16   ? "bf16"
                       : d == BurnDtype::fp16 ? "fp16"
                       : d == BurnDtype::tf32 ? "tf32"
                                              : nullptr;
    for (const auto& p : gemm::precisions())
        if (name && std::string_view(p.name) == name) return &p;
    return nullptr;
}

// Memory traffic: copy src -> dst over most of the free memory, then verify dst.
class MemoryLoad final : public MemoryTraffic {
public:
    MemoryLoad(GpuSession& s, double fraction) : s_(s) {
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
                  {arg::ptr(src_), arg::u64(n_vec_), arg::u32(kPattern)});
        st_.synchronize();
    }
    std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mism) override {
        double ms = s_.time_ms(st_, [&] {
            s_.launch("stream_copy", s_.geometry("stream_copy"), st_,
                      {arg::ptr(dst_), arg::ptr(src_), arg::u64(n_vec_)});
        });
        s_.zero(counts_, &st_);
        s_.launch("stream_verify", s_.geometry("stream_verify"), st_,
                  {arg::ptr(dst_), arg::u64(n_vec_), arg::u32(kPattern), arg::ptr(counts_)});
        st_.synchronize();
        std::uint64_t bad = 0;
        s_.download(&bad, counts_.ptr(), 8);
        mism += bad;
        compared += n_vec_ * 4;
        s_.launch("stream_write", s_.geometry("stream_write"), st_, {arg::ptr(dst_), arg::u64(n_vec_), arg::u32(0)});
        return {32.0 * double(n_vec_), ms};
    }

private:
    static constexpr std::uint32_t kPattern = 0xA5C3F00Fu;
    GpuSession& s_;
    std::uint64_t n_vec_ = 0;
    DeviceBuffer src_, dst_, counts_;
    Stream st_;
};

// The CUDA loads of one GPU. `lt`: the loaded cuBLASLt, or null when the compute load is the FMA
// kernels (`fma_note` says why).
Loads cuda_loads(GpuSession& s, const BurnOptions& opt, const CublasLtApi* lt, const std::string& fma_note,
                 const std::atomic<bool>& stop) {
    Loads loads;
    loads.note = fma_note;
    if (opt.load != BurnLoad::memory) {
        const gemm::PrecisionInfo* p = lt ? gemm_precision(opt.dtype) : nullptr;
        if (p && s.compute_capability() < p->min_cc) {
            loads.note = std::string("this GPU has no ") + p->name + " tensor GEMM (compute capability below " +
                         std::to_string(p->min_cc / 10) + "." + std::to_string(p->min_cc % 10) +
                         "): FMA kernels instead";
            p = nullptr;
        }
        if (p) loads.compute = std::make_unique<GemmLoad>(*lt, s, *p, &stop);
        else loads.compute = std::make_unique<FmaLoad>(s, opt.dtype);
        if (p) loads.note.clear();
    }
    if (opt.load != BurnLoad::gemm) loads.memory = std::make_unique<MemoryLoad>(s, opt.memory_fraction);
    return loads;
}

// One GPU's load until `stop`: its loads prepared, then batches timed, checked and recorded in L.
void load_thread(Live& L, const std::function<Loads()>& prepare, const std::atomic<bool>& stop, Clock::time_point t0) {
    auto now_s = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    Loads loads;
    Aggregator fa, ma;
    try {
        loads = prepare();
        ComputeLoad* compute = loads.compute.get();
        MemoryTraffic* mem = loads.memory.get();
        {
            std::lock_guard<std::mutex> lk(L.mu);
            L.out.load = compute ? compute->name() : "memory copy";
            if (mem && compute) L.out.load += " + memory";
            L.out.throughput_unit = compute ? "TFLOPS" : "GB/s";
            if (!loads.note.empty() && (compute || loads.note_always)) L.out.notes.push_back(loads.note);
        }
        double start = now_s();
        L.ready = true;
        while (!stop.load()) {
            std::uint64_t cmp = 0, mism = 0, nans = 0;
            if (compute) {
                auto [flops, ms] = compute->batch(cmp, mism, nans);
                if (auto r = fa.add(flops, ms)) {
                    std::lock_guard<std::mutex> lk(L.mu);
                    L.out.batch_t_s.push_back(now_s());
                    L.out.batch_throughput.push_back(*r / 1e12);
                    L.last_rate = *r / 1e12;
                }
            }
            if (mem && !stop.load()) {
                auto [bytes, ms] = mem->batch(cmp, mism);
                if (auto r = ma.add(bytes, ms)) {
                    std::lock_guard<std::mutex> lk(L.mu);
                    double t = now_s();
                    L.gbps_t_s.push_back(t);
                    L.gbps.push_back(*r / 1e9);
                    if (!compute) {
                        L.out.batch_t_s.push_back(t);
                        L.out.batch_throughput.push_back(*r / 1e9);
                        L.last_rate = *r / 1e9;
                    }
                }
            }
            std::lock_guard<std::mutex> lk(L.mu);
            L.out.results_compared += cmp;
            L.out.mismatches += mism;
            L.out.nans += nans;
            L.errors = L.out.mismatches + L.out.nans;
            L.out.duration_s = now_s() - start;
        }
    } catch (const Interrupted&) {
        // Stopped while the load was being prepared: nothing measured, and nothing wrong.
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(L.mu);
        L.out.load_error = e.what();
    }
    L.done = true;
}

std::string progress_line(const GpuBurnOutcome& o, double rate, std::uint64_t errors,
                          const std::optional<TelemetrySample>& s) {
    char b[256];
    int n = rate > 0 ? std::snprintf(b, sizeof b, "GPU %d  %7.2f %s", o.gpu, rate, o.throughput_unit.c_str())
                     : std::snprintf(b, sizeof b, "GPU %d  %7s %s", o.gpu, "--", o.throughput_unit.c_str());
    std::string line(b, std::size_t(std::max(0, n)));
    if (s) {
        if (s->temperature_c) line += "  " + std::to_string(int(*s->temperature_c)) + " C";
        if (s->memory_temperature_c)
            line += " (mem " + std::to_string(int(std::lround(*s->memory_temperature_c))) + " C)";
        if (s->power_w) line += "  " + std::to_string(int(std::lround(*s->power_w))) + " W";
        if (s->sm_clock_mhz) line += "  " + std::to_string(int(*s->sm_clock_mhz)) + " MHz";
        if (s->clock_event_reasons) {
            auto names = decode_clock_reasons(*s->clock_event_reasons & ~nvml::kClocksEventReasonGpuIdle);
            std::string r;
            for (const auto& x : names) r += (r.empty() ? "" : ",") + x;
            if (!r.empty()) line += "  [" + r + "]";
        }
    }
    line += "  errors " + std::to_string(errors);
    if (!o.load_error.empty()) line += "  STOPPED: " + o.load_error.substr(0, 60);
    return line;
}

}  // namespace

const char* to_string(BurnDtype d) {
    switch (d) {
        case BurnDtype::bf16: return "bf16";
        case BurnDtype::fp16: return "fp16";
        case BurnDtype::tf32: return "tf32";
        case BurnDtype::fp32: return "fp32";
        case BurnDtype::fp64: return "fp64";
    }
    return "?";
}
const char* to_string(BurnLoad l) {
    switch (l) {
        case BurnLoad::gemm: return "gemm";
        case BurnLoad::memory: return "memory";
        case BurnLoad::mixed: return "mixed";
    }
    return "?";
}

BurnDtype parse_burn_dtype(const std::string& s) {
    for (BurnDtype d : {BurnDtype::bf16, BurnDtype::fp16, BurnDtype::tf32, BurnDtype::fp32, BurnDtype::fp64})
        if (s == to_string(d)) return d;
    throw Error(ErrorKind::Usage, "unknown --dtype '" + s + "'", "use one of bf16, fp16, tf32, fp32, fp64");
}
BurnLoad parse_burn_load(const std::string& s) {
    for (BurnLoad l : {BurnLoad::gemm, BurnLoad::memory, BurnLoad::mixed})
        if (s == to_string(l)) return l;
    throw Error(ErrorKind::Usage, "unknown --load '" + s + "'", "use one of gemm, memory, mixed");
}
double parse_duration_s(const std::string& s, std::string_view option) {
    return parse_number_option(option, s, kBurnDurationRule);
}

namespace {

using Lives = std::vector<std::unique_ptr<Live>>;

// What the inventory and the SKU lookup know of each member of the set; a GPU that could not be
// opened carries the reason as its load error.
std::vector<GpuBurnOutcome> cuda_outcomes(GpuSet& set, const BurnTargets& targets) {
    std::vector<GpuBurnOutcome> outs;
    for (auto& m : set.members()) {
        GpuBurnOutcome o;
        o.gpu = m.index;
        if (m.info) {
            const GpuInfo& gi = *m.info;
            if (gi.name) o.name = *gi.name;
            if (gi.temperature_slowdown_c) o.slowdown_temp_c = *gi.temperature_slowdown_c;
            if (gi.temperature_memory_max_c) o.memory_max_temp_c = *gi.temperature_memory_max_c;
            if (gi.power_default_limit_w) o.default_power_limit_w = *gi.power_default_limit_w;
        }
        for (std::size_t i = 0; i < targets.gpus.size() && i < targets.skus.size(); ++i)
            if (targets.gpus[i]->index == m.index) o.sku = targets.skus[i];
        if (!m.session) o.load_error = m.error + (m.advice.empty() ? "" : " (" + m.advice + ")");
        outs.push_back(std::move(o));
    }
    return outs;
}

// The compute load: cuBLASLt GEMMs for the tensor dtypes when the library is there (loaded into
// `lt`), else the FMA kernels. Returns the note saying why FMA kernels run, or empty.
std::string choose_compute(const BurnOptions& opt, const BurnTargets& targets, std::optional<CublasLtApi>& lt) {
    if (opt.load == BurnLoad::memory) return {};
    if (!gemm_precision(opt.dtype))
        return std::string(to_string(opt.dtype)) + " runs on the CUDA-core FMA kernels (no tensor GEMM for it)";
    lt.emplace(CublasLtApi::load(targets.cuda_driver_version.value_or(0)));
    if (lt->ok()) return {};
    std::string note = "cuBLASLt is not usable (" + lt->error + "): FMA kernels instead of tensor GEMMs";
    lt.reset();
    return note;
}

// `left_s`: the time left under load; none while the loads are still being prepared.
void draw_progress(Progress& progress, Lives& lives, const TelemetrySampler& sampler, std::optional<double> left_s) {
    std::vector<std::string> lines;
    for (auto& L : lives) {
        std::lock_guard<std::mutex> lk(L->mu);
        lines.push_back(progress_line(L->out, L->last_rate.load(), L->errors.load(), sampler.latest(L->out.gpu)));
    }
    char head[64];
    if (left_s) std::snprintf(head, sizeof head, "%.0f s left", std::max(0.0, *left_s));
    else std::snprintf(head, sizeof head, "preparing the load");
    lines.insert(lines.begin(), head);
    progress.update_lines(lines);
}

// Waits until the planned time has passed under load, every load has ended or a stop was asked
// for (returns true then). This loop is the sampler's clock: it wakes for each sample and
// redraws every 100 ms.
bool watch_load(CheckContext& ctx, const BurnOptions& opt, Lives& lives, TelemetrySampler& sampler) {
    std::optional<Clock::time_point> load_t0;
    auto next_draw = Clock::now();
    while (true) {
        Clock::time_point next_sample = sampler.poll();
        if (ctx.stop_requested()) return true;
        bool all_done = std::all_of(lives.begin(), lives.end(), [](const auto& L) { return L->done.load(); });
        // The duration counts from the moment every GPU's load runs, so setup (filling buffers,
        // choosing the GEMM algorithm) does not eat into the time under load.
        if (!load_t0 && std::all_of(lives.begin(), lives.end(), [](const auto& L) { return L->ready || L->done; }))
            load_t0 = Clock::now();
        double el = load_t0 ? std::chrono::duration<double>(Clock::now() - *load_t0).count() : 0;
        if (el >= opt.duration_s || all_done) return false;
        if (ctx.progress && Clock::now() >= next_draw) {
            next_draw = Clock::now() + std::chrono::milliseconds(100);
            draw_progress(*ctx.progress, lives, sampler,
                          load_t0 ? std::optional<double>(opt.duration_s - el) : std::nullopt);
        }
        std::this_thread::sleep_until(std::min(next_sample, Clock::now() + std::chrono::milliseconds(100)));
    }
}

// Without telemetry nothing watched the throttling and temperatures: a pass says so. `library`
// names the one that read the GPUs (NVML, AMD SMI).
void note_telemetry_error(std::vector<CheckResult>& results, const std::string& telemetry_error,
                          std::string_view library) {
    if (telemetry_error.empty()) return;
    const std::string lib(library);
    for (auto& r : results) {
        r.details.push_back(lib + " telemetry unavailable: " + telemetry_error);
        if (r.verdict == Verdict::Pass) {
            r.verdict = Verdict::Warn;
            r.summary += "; throttling and temperature were not watched (" + lib + " unavailable)";
        }
    }
}

// The telemetry and throughput series, in seconds since the report started.
void add_series(Report& report, const TelemetryData& telemetry, const Lives& lives, double report_offset) {
    auto series = to_time_series(telemetry);
    for (auto& L : lives) {
        const auto& o = L->out;
        if (!o.batch_throughput.empty())
            series.push_back(TimeSeries{o.throughput_unit == "GB/s" ? "throughput_gbps" : "throughput_tflops",
                                        o.throughput_unit,
                                        o.gpu,
                                        o.batch_t_s,
                                        o.batch_throughput,
                                        {}});
        if (!L->gbps.empty() && o.throughput_unit != "GB/s")
            series.push_back(TimeSeries{"memory_gbps", "GB/s", o.gpu, L->gbps_t_s, L->gbps, {}});
    }
    for (auto& s : series) {
        s.key = "burn." + s.key;
        for (double& t : s.t_s) t += report_offset;
        report.series.push_back(std::move(s));
    }
}

}  // namespace

namespace burn_detail {

std::vector<CheckResult> drive_burn(CheckContext& ctx, const BurnOptions& opt, std::vector<GpuBurnOutcome> outcomes,
                                    const PrepareLoads& prepare, const RunParallel& run_parallel,
                                    std::string_view telemetry_library) {
    const auto t0 = Clock::now();
    const double report_offset = ctx.elapsed_s();  // series times are seconds since the report started

    Lives lives;
    std::vector<int> indexes;
    for (auto& o : outcomes) {
        auto L = std::make_unique<Live>();
        L->out = std::move(o);
        L->done = !L->out.load_error.empty();  // not opened: nothing to run
        indexes.push_back(L->out.gpu);
        lives.push_back(std::move(L));
    }

    TelemetrySampler sampler(GpuBackends::shared().devices(), indexes, opt.sample_hz, t0);
    std::string telemetry_error;
    try {
        sampler.start();
    } catch (const std::exception& e) {
        telemetry_error = e.what();
    }

    std::atomic<bool> stop_load{false};
    std::thread runner([&] {
        run_parallel([&](std::size_t k) {
            load_thread(
                *lives[k], [&] { return prepare(k, stop_load); }, stop_load, t0);
        });
    });

    if (ctx.progress) ctx.progress->begin("gpu.burn", "Sustained load (burn)");
    const bool interrupted = watch_load(ctx, opt, lives, sampler);
    stop_load = true;
    runner.join();
    sampler.stop();
    if (ctx.progress) ctx.progress->end();

    BurnInput in;
    in.planned_s = opt.duration_s;
    in.interrupted = interrupted;
    in.telemetry = sampler.snapshot();
    if (!telemetry_error.empty()) in.telemetry.xid_absent_reason = "telemetry could not start: " + telemetry_error;
    for (auto& L : lives) in.gpus.push_back(L->out);
    auto results = judge_burn(in);
    note_telemetry_error(results, telemetry_error, telemetry_library);

    if (ctx.report) {
        add_series(*ctx.report, in.telemetry, lives, report_offset);
        if (interrupted) ctx.report->interrupted = true;
    }
    return results;
}

}  // namespace burn_detail

std::vector<CheckResult> run_burn(CheckContext& ctx, const BurnOptions& opt, const BurnTargets& targets) {
    GpuSet set = GpuSet::open(targets.gpus);
    std::vector<GpuBurnOutcome> outcomes = cuda_outcomes(set, targets);
    std::optional<CublasLtApi> lt;
    const std::string fma_note = choose_compute(opt, targets, lt);
    auto& members = set.members();
    auto prepare = [&](std::size_t k, const std::atomic<bool>& stop) {
        return cuda_loads(*members[k].session, opt, lt ? &*lt : nullptr, fma_note, stop);
    };
    auto run_parallel = [&](const std::function<void(std::size_t)>& fn) {
        set.run_parallel([&](GpuSet::Member& m) {
            for (std::size_t k = 0; k < members.size(); ++k)
                if (&members[k] == &m) fn(k);
        });
    };
    return drive_burn(ctx, opt, std::move(outcomes), prepare, run_parallel, "NVML");
}

}  // namespace gpuvet
