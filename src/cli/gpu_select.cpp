// Parsing of --gpus and --only, shared by check and bench.
#include <algorithm>
#include <sstream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
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
    // NVML numbers GPUs from 0; no server holds more than 1024.
    constexpr NumberRule kIndexRule{.min = 0, .max = 1023, .whole = true, .what = "a GPU index", .example = "0,1"};
    while (std::getline(ss, item, ',')) {
        NumberRead n = read_number(item, kIndexRule);
        if (n.problem)
            throw usage_error(
                "--gpus: '" + item.substr(0, 40) + "' is not a GPU index (" + *n.problem + ")",
                "give indexes " + describe_range(kIndexRule) + " as listed by gpuvet inventory, e.g. --gpus 0,1");
        int index = static_cast<int>(n.value);
        // A GPU named twice would be read, shown and exported twice (duplicate series).
        if (std::find(out.begin(), out.end(), index) != out.end())
            throw usage_error("--gpus: GPU " + std::to_string(index) + " is named twice",
                              "name each GPU once, e.g. --gpus 0,1");
        out.push_back(index);
    }
    if (out.empty())
        throw usage_error("--gpus: no GPU index given", "give indexes as listed by gpuvet inventory, e.g. --gpus 0,1");
    return out;
}

void check_gpu_indexes(const std::vector<int>& gpus, const Inventory& inv) {
    if (inv.gpus.empty()) return;  // no driver: the GPU checks skip and say why
    for (int i : gpus) {
        bool known = false;
        for (const auto& g : inv.gpus) known = known || g.index == i;
        if (!known)
            throw usage_error("--gpus: there is no GPU " + std::to_string(i),
                              "see gpuvet inventory for the GPU indexes");
    }
}

}  // namespace gpuvet
