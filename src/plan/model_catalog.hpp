// The embedded model catalog (data/models.toml) and forgiving look-up by name.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "plan/model_arch.hpp"

namespace gpuvet {

class ModelCatalog {
public:
    static ModelCatalog embedded();
    // Throws gpuvet::Error (Input) naming origin:line:column.
    static ModelCatalog parse(std::string_view toml_text, const std::string& origin);

    // References into the catalog: refused on a temporary, which would be gone before they are used
    // (`for (auto& m : ModelCatalog::embedded().all())` read freed memory).
    const std::vector<ModelArch>& all() const& { return models_; }
    const std::vector<ModelArch>& all() && = delete;
    // Key, name or alias, ignoring case and the characters " -_./". Throws Input with the
    // closest names when nothing matches.
    const ModelArch& find(std::string_view query) const&;
    const ModelArch& find(std::string_view query) && = delete;
    std::vector<std::string> closest(std::string_view query, std::size_t n = 4) const;

private:
    std::vector<ModelArch> models_;
};

}  // namespace gpuvet
