// Parsing of --gpus and --only, shared by check and bench.
#include <cstdlib>
#include <sstream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::vector<int> parse_gpu_list(const std::string& s) {
    std::vector<int> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end || v < 0 || v > 1023)
            throw usage_error("--gpus: '" + item + "' is not a GPU index",
                              "give indexes as listed by gpuvet inventory, e.g. --gpus 0,1");
        out.push_back(static_cast<int>(v));
    }
    if (out.empty()) throw usage_error("--gpus: no GPU index given", "give indexes as listed by gpuvet inventory, e.g. --gpus 0,1");
    return out;
}

void check_gpu_indexes(const std::vector<int>& gpus, const Inventory& inv) {
    if (inv.gpus.empty()) return;  // no driver: the GPU checks skip and say why
    for (int i : gpus) {
        bool known = false;
        for (const auto& g : inv.gpus) known = known || g.index == i;
        if (!known) throw usage_error("--gpus: there is no GPU " + std::to_string(i), "see gpuvet inventory for the GPU indexes");
    }
}

}  // namespace gpuvet
