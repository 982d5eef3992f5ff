#include "kernel_launch.hpp"

#include <dirent.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "kernel_timing.hpp"
#include "ptx_parse.hpp"

namespace fake {

namespace {

uint64_t env_number(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

// The .entry names a PTX text declares, found without parsing it (an edited file may not parse).
std::set<std::string> entry_names(const std::string& text) {
    std::set<std::string> out;
    for (size_t p = text.find(".entry"); p != std::string::npos; p = text.find(".entry", p + 6)) {
        size_t b = text.find_first_not_of(" \t\r\n", p + 6), e = b;
        while (e < text.size() &&
               (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_' || text[e] == '$'))
            ++e;
        if (b != std::string::npos && e > b) out.insert(text.substr(b, e - b));
    }
    return out;
}

// The text of the .ptx file in `dir` that declares the same entries as `image`, or empty.
std::string override_text(const std::string& dir, const std::string& image) {
    std::string found;
    DIR* d = opendir(dir.c_str());
    if (!d) return found;
    const std::set<std::string> want = entry_names(image);
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() < 4 || n.compare(n.size() - 4, 4, ".ptx") != 0) continue;
        std::ifstream f(dir + "/" + n);
        std::stringstream ss;
        ss << f.rdbuf();
        if (entry_names(ss.str()) == want) found = ss.str();
    }
    closedir(d);
    return found;
}

// Bytes at least one pointer parameter can reach: the largest allocation any of them points into.
uint64_t largest_buffer(const ptx::Function& f, void* const* params, const DeviceMemory& mem) {
    uint64_t most = 0;
    for (size_t i = 0; i < f.params.size(); ++i) {
        if (f.params[i].bytes != 8) continue;
        uint64_t v;
        std::memcpy(&v, params[i], 8);
        ptx::Region r = mem.resolve(v);
        if (r.host) most = std::max(most, r.hi - r.lo);
    }
    return most;
}

// Scenario faults, applied to what the kernel stored: bad cells flip their bits; with
// fma_wrong_results every fma_* result is off by one (+1 for f64/f32, one unit in the last place
// of the low lane for packed halves), so on-device and host comparisons see a plausible wrong value.
void corrupt(const ptx::Function& f, const std::vector<std::pair<uint64_t, unsigned>>& stores, const Gpu& gpu,
             const DeviceMemory& mem) {
    std::set<uint64_t> words;
    for (auto [addr, n] : stores)
        for (uint64_t w = addr & ~7ull; w < addr + n; w += 8) words.insert(w);
    if (gpu.fma_wrong_results && f.name.rfind("fma_", 0) == 0) {
        std::set<uint64_t> done;
        for (auto [addr, n] : stores) {
            if (!done.insert(addr).second) continue;
            ptx::Region r = mem.resolve(addr);
            unsigned char* h = r.host + (addr - r.lo);
            if (f.name == "fma_f64") {
                double v;
                std::memcpy(&v, h, 8);
                v += 1;
                std::memcpy(h, &v, 8);
            } else if (f.name == "fma_f32") {
                float v;
                std::memcpy(&v, h, 4);
                v += 1;
                std::memcpy(h, &v, 4);
            } else {
                uint32_t v;
                std::memcpy(&v, h, 4);
                v += 1;
                std::memcpy(h, &v, 4);
            }
        }
    }
    std::map<uint64_t, uint64_t> cells;
    uint64_t cells_lo = 1, cells_hi = 0;  // allocation whose cells are in `cells`
    for (uint64_t w : words) {
        if (w < cells_lo || w >= cells_hi) {
            ptx::Region r = mem.resolve(w);
            cells = mem.bad_cells(w), cells_lo = r.lo, cells_hi = r.hi;
        }
        auto it = cells.find(w);
        if (it == cells.end()) continue;
        ptx::Region r = mem.resolve(w);
        uint64_t v;
        std::memcpy(&v, r.host + (w - r.lo), 8);
        v ^= it->second;
        std::memcpy(r.host + (w - r.lo), &v, 8);
    }
}

}  // namespace

std::shared_ptr<const ptx::Module> load_module(const std::string& image, std::string& error) {
    try {
        if (const char* dir = std::getenv("GPUVET_FAKE_PTX_DIR"); dir && *dir) {
            std::string text = override_text(dir, image);
            if (!text.empty()) return std::make_shared<ptx::Module>(ptx::parse(text));
        }
        return std::make_shared<ptx::Module>(ptx::parse(image));
    } catch (const ptx::LoadError& e) {
        error = e.what();
        return nullptr;
    }
}

LaunchOutcome run_kernel(const ptx::Module& m, uint32_t entry, const unsigned grid[3], const unsigned block[3],
                         void* const* params, const Gpu& gpu, const DeviceMemory& mem) {
    const ptx::Function& f = m.functions[entry];
    LaunchOutcome out;
    if (!f.params.empty() && !params) return {LaunchStatus::invalid, f.name + ": kernelParams is NULL", 0};
    const uint64_t limit = env_number("GPUVET_FAKE_PTX_MAX_BUFFER_BYTES", 256ull << 20);
    if (uint64_t big = largest_buffer(f, params, mem); big > limit)
        return {LaunchStatus::too_big,
                f.name + " was given a " + std::to_string(big >> 20) +
                    " MiB buffer: the PTX interpreter runs kernels on at most " + std::to_string(limit >> 20) +
                    " MiB (GPUVET_FAKE_PTX_MAX_BUFFER_BYTES); give the scenario GPUs less memory (memory_total_mib)",
                0};
    std::vector<std::pair<uint64_t, unsigned>> stores;
    ptx::LaunchConfig c;
    for (int k = 0; k < 3; ++k) c.grid[k] = grid[k], c.block[k] = block[k];
    c.params = params;
    const bool watch_all = gpu.fma_wrong_results && f.name.rfind("fma_", 0) == 0;
    c.resolve = [&](uint64_t a) {
        ptx::Region r = mem.resolve(a);
        r.watch = r.watch || watch_all;
        return r;
    };
    c.budget = env_number("GPUVET_FAKE_PTX_BUDGET", 200000000ull);
    c.watched = &stores;
    ptx::LaunchResult r = ptx::launch(m, entry, c);
    switch (r.fault) {
        case ptx::Fault::none: break;
        case ptx::Fault::illegal_address: return {LaunchStatus::illegal_address, r.message, 0};
        case ptx::Fault::misaligned_address: return {LaunchStatus::misaligned_address, r.message, 0};
        case ptx::Fault::instruction_budget:
            return {LaunchStatus::timeout,
                    r.message + " (GPUVET_FAKE_PTX_BUDGET branches and calls per launch; a kernel that never ends?)",
                    0};
    }
    corrupt(f, stores, gpu, mem);
    const uint64_t threads = uint64_t{grid[0]} * grid[1] * grid[2] * block[0] * block[1] * block[2];
    auto ns = simulated_ns(f, params, threads, gpu);
    out.ns = ns ? *ns : 0;
    return out;
}

}  // namespace fake
