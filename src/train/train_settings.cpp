#include "train/train_settings.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace gpuvet {

// A value that is not seconds in (0, 86400) is a usage error naming it.
double train_watchdog_s(double fallback) {
    const char* v = std::getenv("GPUVET_TRAIN_WATCHDOG_S");
    if (!v || !*v) return fallback;
    char* end = nullptr;
    double s = std::strtod(v, &end);
    if (end && *end == '\0' && s > 0 && s < 86400) return s;
    // Said, not ignored: a watchdog the user thinks is set would otherwise fire at another limit.
    throw usage_error(
        std::string("GPUVET_TRAIN_WATCHDOG_S=") + v + " is not a number of seconds above 0 and below 86400",
        "set it to the seconds without progress after which the benchmark counts as hung, e.g. 300, "
        "or unset it for the default of " +
            std::to_string(int(fallback)) + " s");
}

bool train_cpu_allowed() {
    const char* v = std::getenv("GPUVET_TRAIN_ALLOW_CPU");
    return v && std::string(v) == "1";
}

}  // namespace gpuvet
