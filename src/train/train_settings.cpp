#include "train/train_settings.hpp"

#include <cstdlib>
#include <string>

namespace gpuvet {

double train_watchdog_s(double fallback) {
    const char* v = std::getenv("GPUVET_TRAIN_WATCHDOG_S");
    if (!v || !*v) return fallback;
    char* end = nullptr;
    double s = std::strtod(v, &end);
    return (end && *end == '\0' && s > 0 && s < 86400) ? s : fallback;
}

bool train_cpu_allowed() {
    const char* v = std::getenv("GPUVET_TRAIN_ALLOW_CPU");
    return v && std::string(v) == "1";
}

}  // namespace gpuvet
