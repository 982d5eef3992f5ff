#include "core/context.hpp"

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
