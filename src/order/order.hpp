// What was ordered: the items a delivered server is verified against (`gpuvet check --expect` or
// `--order FILE`). Every item is optional: an item that was not given is not checked.
// Grammar and keys: docs/order.md.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

class SpecDb;

struct Order {
    std::string origin;  // "--expect \"8x H100\"" or the order file's path

    std::optional<std::string> gpu_model;  // as written: "H100-SXM-80GB"
    std::vector<std::string> gpu_skus;     // spec keys the model fits, the chosen one first
    std::string gpu_match_how;             // SpecDb's word for the match: "name", "preferred of 3"
    std::optional<int> gpu_count;          // absent: any count
    std::optional<double> gpu_memory_gib;  // per GPU, as written (absent: the SKU's own size)
    std::optional<bool> nvlink_required;
    std::optional<bool> mig_expected;  // GPUs delivered sliced on purpose: MIG, or AMD compute/memory partitions
    std::optional<int> cpu_cores;
    std::optional<double> ram_gib;
    std::optional<double> disk_gb;  // capacity of the data-dir filesystem, decimal GB
    std::optional<double> network_gbitps;

    bool empty() const {
        return !gpu_model && !gpu_count && !gpu_memory_gib && !nvlink_required && !mig_expected && !cpu_cores &&
               !ram_gib && !disk_gb && !network_gbitps;
    }
};

// Resolves `model` through the spec database and stores the SKUs it fits in `o`.
// Throws gpuvet::Error (Input) for an unknown model, naming the closest SKUs.
void resolve_gpu_model(Order& o, const std::string& model, const SpecDb& specs);

// "8x H100-SXM-80GB, 64 cores, 1TB RAM". Throws gpuvet::Error (Input) showing the accepted forms.
Order parse_expect(std::string_view text, const SpecDb& specs);

// An order file (TOML). `origin` names it in errors as origin:line:column.
Order parse_order_toml(std::string_view text, const std::string& origin, const SpecDb& specs);
Order load_order_file(const std::string& path, const SpecDb& specs);

// The accepted --expect forms, with examples, for error messages and --help.
extern const char* const kExpectForms;

}  // namespace gpuvet
