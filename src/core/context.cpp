#include "core/context.hpp"

#include "core/error.hpp"

#include <algorithm>

namespace gpuvet {

const char* to_string(Tier t) {
    switch (t) {
        case Tier::Quick: return "quick";
        case Tier::Standard: return "standard";
        case Tier::Full: return "full";
    }
    return "?";
}

const CheckResult* PriorResults::result(std::string_view key) const {
    if (std::find(readable_.begin(), readable_.end(), key) == readable_.end())
        throw internal_error("a check read " + std::string(key) + "'s result without declaring it in reads()");
    if (!results_) return nullptr;
    for (const CheckResult& r : *results_)
        if (r.key == key) return &r;
    return nullptr;
}

std::optional<double> PriorResults::value(std::string_view key, std::string_view measurement) const {
    if (const CheckResult* r = result(key))
        for (const Measurement& m : r->measurements)
            if (m.key == measurement && m.value) return m.value;
    return std::nullopt;
}

void CheckContext::throw_if_stopped() const {
    if (stop_requested()) throw Interrupted{};
}
}  // namespace gpuvet
