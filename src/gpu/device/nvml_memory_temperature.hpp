// Memory (HBM) temperature, which NVML offers only as a field value (NVML_FI_DEV_MEMORY_TEMP via
// nvmlDeviceGetFieldValues), read by the NVML backend's sample().
#pragma once
#include <optional>
#include <string>

#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

struct MemoryTemperatureReading {
    std::optional<double> celsius;  // set when measured
    std::string absent_reason;      // why not, when not measured
    int rc = 0;                     // NVML status behind an absence (call or entry); 0 otherwise
};

inline constexpr const char* kMemoryTempNotReported =
    "this GPU does not report memory temperature (GDDR cards usually do not)";

// A field entry's value as a number, read through the member its valueType names; nullopt when
// the entry failed or names a type this header does not know.
std::optional<double> field_value_number(const nvml::nvmlFieldValue_t& v);

// Reads the memory temperature of `dev`. Absent, with the reason, when the driver lacks
// nvmlDeviceGetFieldValues, the call or the entry fails, or the GPU has no memory sensor.
MemoryTemperatureReading read_memory_temperature(const NvmlApi& api, nvml::nvmlDevice_t dev);

}  // namespace gpuvet
