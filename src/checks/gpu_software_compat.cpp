#include "checks/gpu_software_judge.hpp"

#include <algorithm>
#include <set>

#include "core/numbers.hpp"

namespace gpuvet {

namespace {

struct Version {
    int major = 0, minor = 0;
};
std::optional<Version> parse_major_minor(const std::string& s) {
    auto dot = s.find('.');
    try {
        Version v;
        std::size_t used = 0;
        v.major = std::stoi(s.substr(0, dot), &used);
        if (dot != std::string::npos) v.minor = std::stoi(s.substr(dot + 1));
        if (v.major < 0 || v.minor < 0) return std::nullopt;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}
std::string text(Version v) { return std::to_string(v.major) + "." + std::to_string(v.minor); }
Version of_driver(int v) { return {v / 1000, (v % 1000) / 10}; }

// "sm_90" -> {9, 0, false}; "compute_86" -> {8, 6, true}; "sm_90a" is arch-specific: not portable.
struct Arch {
    int major = 0, minor = 0;
    bool ptx = false;
};
std::optional<Arch> parse_arch(const std::string& a) {
    bool ptx = a.rfind("compute_", 0) == 0;
    if (!ptx && a.rfind("sm_", 0) != 0) return std::nullopt;
    std::string digits = a.substr(ptx ? 8 : 3);
    if (digits.size() < 2 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
    int n = std::stoi(digits);
    return Arch{n / 10, n % 10, ptx};
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (auto& s : v) out += (out.empty() ? "" : " ") + s;
    return out.empty() ? "(empty)" : out;
}

}  // namespace

std::string cudnn_text(int v) {
    if (v >= 10000)
        return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
}

std::string torch_cuda_wheel_command(std::optional<int> driver_cuda) {
    std::string tag =
        "cu" + (driver_cuda ? std::to_string(*driver_cuda / 1000) + std::to_string((*driver_cuda % 1000) / 10)
                            : std::string("128"));
    return "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/" + tag +
           " (a wheel for a CUDA at most the driver's; the tags PyTorch publishes are listed on its install page)";
}

Rule cuda_compat(int driver_cuda_version, const std::string& framework_cuda) {
    Version d = of_driver(driver_cuda_version);
    auto f = parse_major_minor(framework_cuda);
    if (!f) return {Verdict::Warn, "PyTorch reports CUDA '" + framework_cuda + "', which is not a version number"};
    std::string both = "PyTorch is built for CUDA " + text(*f) + ", the driver supports CUDA " + text(d);
    if (f->major > d.major)
        return {Verdict::Fail, both +
                                   ": a build for a newer CUDA major version cannot run on this driver. Fix: a driver "
                                   "for CUDA " +
                                   text(*f) + " or newer, or " + torch_cuda_wheel_command(driver_cuda_version)};
    if (f->major == d.major && f->minor > d.minor)
        return {Verdict::Warn,
                both +
                    ": it runs by CUDA minor-version compatibility, but PTX it JIT-compiles and features "
                    "that need the newer driver fail. Fix: a driver for CUDA " +
                    text(*f) + " or newer, or a wheel for CUDA " + text(d)};
    return {Verdict::Pass, both + ": compatible (a driver runs builds for its CUDA version and older)"};
}

Rule arch_compat(const std::string& cc, const std::vector<std::string>& arch_list) {
    auto g = parse_major_minor(cc);
    if (!g) return {Verdict::Warn, "compute capability '" + cc + "' is not a version number"};
    const std::string sm = "sm_" + std::to_string(g->major) + std::to_string(g->minor);
    std::optional<Arch> binary, ptx;
    for (const auto& a : arch_list) {
        auto p = parse_arch(a);
        if (!p) continue;
        int code = p->major * 10 + p->minor, mine = g->major * 10 + g->minor;
        if (!p->ptx && p->major == g->major && p->minor <= g->minor && (!binary || p->minor > binary->minor))
            binary = p;
        if (p->ptx && code <= mine && (!ptx || p->major * 10 + p->minor > ptx->major * 10 + ptx->minor)) ptx = p;
    }
    if (binary && binary->minor == g->minor)
        return {Verdict::Pass, "the build has " + sm + " kernels for compute capability " + cc};
    if (binary)
        return {Verdict::Pass, "the build has sm_" + std::to_string(binary->major) + std::to_string(binary->minor) +
                                   " kernels, which run on compute capability " + cc +
                                   " (binary compatible within a major version)"};
    if (ptx)
        return {Verdict::Warn,
                "the build has no " + sm + " kernels, only compute_" + std::to_string(ptx->major) +
                    std::to_string(ptx->minor) + " PTX: it is JIT-compiled for compute capability " + cc +
                    " at start-up (slow first run, kernels slower than native). Fix: a PyTorch build whose "
                    "arch list has " +
                    sm};
    return {Verdict::Fail, "the build has no kernels for compute capability " + cc + " (no " + sm +
                               ", no compatible PTX; arch list: " + joined(arch_list) +
                               "): PyTorch cannot run on this GPU. "
                               "Fix: a PyTorch build that lists " +
                               sm + " (a newer wheel)"};
}

}  // namespace gpuvet
