// The GPU spec database: data/gpus.toml embedded at build time, plus user files (--specs).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "specs/gpu_spec.hpp"

namespace gpuvet {

struct SpecMatch {
    const GpuSpec* spec = nullptr;
    std::string how;                           // "exact name", "alias", "tokens", "preferred of 3"
    std::vector<const GpuSpec*> alternatives;  // other SKUs the query also fitted
};

class SpecDb {
public:
    // The database shipped inside the binary.
    static SpecDb embedded();
    // Parses TOML text; `origin` names it in errors ("data/gpus.toml", a user path).
    // A [[gpu]] whose key exists overrides just the fields it sets; a new key adds a SKU.
    // Throws gpuvet::Error (Input) naming origin:line:column and the problem.
    void merge_toml(std::string_view text, const std::string& origin);
    void merge_file(const std::filesystem::path& path);

    // Refused on a temporary: the reference would outlive the database (a range-for over
    // `SpecDb::embedded().all()` reads freed memory).
    const std::vector<GpuSpec>& all() const& { return specs_; }
    const std::vector<GpuSpec>& all() && = delete;
    const GpuSpec* by_key(std::string_view key) const;
    // Device ids are the vendor's own: the same number can name one NVIDIA and one AMD part.
    std::vector<const GpuSpec*> by_pci_device_id(std::uint32_t device_id,
                                                 std::uint32_t vendor_id = kPciVendorNvidia) const;
    // An exact (case-insensitive) driver-reported name, e.g. "NVIDIA H100 80GB HBM3".
    std::vector<const GpuSpec*> by_driver_name(std::string_view reported) const;

    // Forgiving match of what a person typed ("h100", "a100 80g pcie", "4090").
    // Throws gpuvet::Error (Input) for unknown names, listing the closest SKUs.
    SpecMatch match(std::string_view query) const;
    // Same, but returns nullopt instead of throwing.
    std::optional<SpecMatch> try_match(std::string_view query) const;
    // The closest SKU names to a query, best first (for "did you mean").
    std::vector<std::string> closest(std::string_view query, std::size_t n = 5) const;

private:
    std::vector<GpuSpec> specs_;
};

// Normalised tokens of a GPU name: lower case, vendor words dropped, "80G"/"80gb" -> "80gb",
// "sxm5" also yields "sxm". Exposed for tests.
std::vector<std::string> spec_name_tokens(std::string_view name);

}  // namespace gpuvet
