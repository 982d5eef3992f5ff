// Memory temperature through nvmlDeviceGetFieldValues: the value is read by its valueType, and
// every way it can be missing has its own reason.
#include <gtest/gtest.h>

#include "gpu/device/nvml_memory_temperature.hpp"

using namespace gpuvet;
using namespace gpuvet::nvml;

namespace {

// What the stand-in nvmlDeviceGetFieldValues does on the next call.
struct Script {
    nvmlReturn_t call = NVML_SUCCESS;
    nvmlReturn_t entry = NVML_SUCCESS;
    nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
    nvmlValue_t value{};
    unsigned seen_field = 0;
    int seen_count = 0;
} g_script;

nvmlReturn_t fake_get_field_values(nvmlDevice_t, int n, nvmlFieldValue_t* v) {
    g_script.seen_count = n;
    g_script.seen_field = v[0].fieldId;
    if (g_script.call != NVML_SUCCESS) return g_script.call;
    v[0].nvmlReturn = g_script.entry;
    v[0].valueType = g_script.type;
    v[0].value = g_script.value;
    return NVML_SUCCESS;
}

MemoryTemperatureReading read_with(Script s) {
    g_script = s;
    NvmlApi api;
    api.nvmlDeviceGetFieldValues = &fake_get_field_values;
    return read_memory_temperature(api, nullptr);
}

}  // namespace

TEST(MemoryTemperature, AsksForTheMemoryTempFieldAndReadsAnUnsignedInt) {
    Script s;
    s.value.uiVal = 71;
    auto r = read_with(s);
    EXPECT_EQ(g_script.seen_field, 82u);  // NVML_FI_DEV_MEMORY_TEMP
    EXPECT_EQ(g_script.seen_count, 1);
    ASSERT_TRUE(r.celsius) << r.absent_reason;
    EXPECT_EQ(*r.celsius, 71);
    EXPECT_TRUE(r.absent_reason.empty());
}

TEST(MemoryTemperature, OtherValueTypesAreReadThroughTheirMember) {
    Script s;
    s.type = NVML_VALUE_TYPE_DOUBLE;
    s.value.dVal = 72.5;
    EXPECT_EQ(*read_with(s).celsius, 72.5);
    s = Script{};
    s.type = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    s.value.ullVal = 73;
    EXPECT_EQ(*read_with(s).celsius, 73);
    s = Script{};
    s.type = NVML_VALUE_TYPE_SIGNED_INT;
    s.value.siVal = 74;
    EXPECT_EQ(*read_with(s).celsius, 74);
    s = Script{};
    s.type = NVML_VALUE_TYPE_UNSIGNED_SHORT;
    s.value.usVal = 75;
    EXPECT_EQ(*read_with(s).celsius, 75);
}

TEST(MemoryTemperature, AnUnknownValueTypeIsAbsentNotGuessed) {
    Script s;
    s.type = static_cast<nvmlValueType_t>(42);
    s.value.uiVal = 70;
    auto r = read_with(s);
    EXPECT_FALSE(r.celsius);
    EXPECT_NE(r.absent_reason.find("value type 42"), std::string::npos) << r.absent_reason;
}

TEST(MemoryTemperature, UnsupportedEntryWhileTheCallSucceeds) {
    Script s;
    s.entry = NVML_ERROR_NOT_SUPPORTED;
    s.value.uiVal = 70;  // must not be read
    auto r = read_with(s);
    EXPECT_FALSE(r.celsius);
    EXPECT_EQ(r.absent_reason, "this GPU does not report memory temperature (GDDR cards usually do not)");
    EXPECT_EQ(r.rc, NVML_ERROR_NOT_SUPPORTED);
}

TEST(MemoryTemperature, ZeroMeansNoSensor) {
    Script s;
    s.value.uiVal = 0;
    auto r = read_with(s);
    EXPECT_FALSE(r.celsius);
    EXPECT_EQ(r.absent_reason, kMemoryTempNotReported);
}

TEST(MemoryTemperature, FailedEntryOrCallGivesTheStatusReason) {
    Script s;
    s.entry = NVML_ERROR_NO_PERMISSION;
    auto r = read_with(s);
    EXPECT_FALSE(r.celsius);
    EXPECT_EQ(r.rc, NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(r.absent_reason, nvml_absent_reason(NVML_ERROR_NO_PERMISSION));
    s = Script{};
    s.call = NVML_ERROR_GPU_IS_LOST;
    r = read_with(s);
    EXPECT_FALSE(r.celsius);
    EXPECT_EQ(r.rc, NVML_ERROR_GPU_IS_LOST);
}

TEST(MemoryTemperature, DriverWithoutTheSymbol) {
    NvmlApi api;  // nvmlDeviceGetFieldValues is null
    auto r = read_memory_temperature(api, nullptr);
    EXPECT_FALSE(r.celsius);
    EXPECT_EQ(r.absent_reason, "driver lacks nvmlDeviceGetFieldValues");
}

TEST(MemoryTemperature, TheSymbolIsInTheTableAsOptional) {
    bool found = false;
    for (const auto& e : nvml_symbol_table())
        if (std::string(e.names[0]) == "nvmlDeviceGetFieldValues") found = e.need == Need::Optional;
    EXPECT_TRUE(found);
}
