#include "gpu/device/nvml_memory_temperature.hpp"

#include "gpu/bindings/symbol_table.hpp"

namespace gpuvet {

using namespace nvml;

std::optional<double> field_value_number(const nvmlFieldValue_t& v) {
    if (v.nvmlReturn != NVML_SUCCESS) return std::nullopt;
    switch (v.valueType) {
        case NVML_VALUE_TYPE_DOUBLE: return v.value.dVal;
        case NVML_VALUE_TYPE_UNSIGNED_INT: return double(v.value.uiVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG: return double(v.value.ulVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return double(v.value.ullVal);
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return double(v.value.sllVal);
        case NVML_VALUE_TYPE_SIGNED_INT: return double(v.value.siVal);
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: return double(v.value.usVal);
        default: return std::nullopt;
    }
}

MemoryTemperatureReading read_memory_temperature(const NvmlApi& api, nvmlDevice_t dev) {
    MemoryTemperatureReading r;
    if (!api.nvmlDeviceGetFieldValues) {
        r.absent_reason = driver_lacks("nvmlDeviceGetFieldValues");
        r.rc = -1;
        return r;
    }
    nvmlFieldValue_t f{};
    f.fieldId = kFiDevMemoryTemp;
    if (int rc = api.nvmlDeviceGetFieldValues(dev, 1, &f); rc != NVML_SUCCESS) {
        r.absent_reason = nvml_absent_reason(rc);
        r.rc = rc;
        return r;
    }
    // The call succeeds when any entry was filled; each entry has its own status.
    if (f.nvmlReturn == NVML_ERROR_NOT_SUPPORTED) {
        r.absent_reason = kMemoryTempNotReported;
        r.rc = f.nvmlReturn;
        return r;
    }
    if (f.nvmlReturn != NVML_SUCCESS) {
        r.absent_reason = nvml_absent_reason(f.nvmlReturn);
        r.rc = f.nvmlReturn;
        return r;
    }
    auto v = field_value_number(f);
    if (!v) {
        r.absent_reason = "NVML returned memory temperature as value type " + std::to_string(int(f.valueType)) +
                          ", which gpuvet does not read";
        return r;
    }
    // Boards without a memory sensor have been seen reporting success with 0; no running GPU's
    // memory is at 0 C, so 0 is taken as "no sensor", never as a reading.
    if (*v <= 0) {
        r.absent_reason = kMemoryTempNotReported;
        return r;
    }
    r.celsius = *v;
    return r;
}

}  // namespace gpuvet
