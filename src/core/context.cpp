#include "core/context.hpp"

#include "core/error.hpp"

namespace gpuvet {

const char* to_string(Tier t) {
    switch (t) {
        case Tier::Quick: return "quick";
        case Tier::Standard: return "standard";
        case Tier::Full: return "full";
    }
    return "?";
}

}  // namespace gpuvet

namespace gpuvet {
void CheckContext::throw_if_stopped() const {
    if (stop_requested()) throw Interrupted{};
}
}  // namespace gpuvet
