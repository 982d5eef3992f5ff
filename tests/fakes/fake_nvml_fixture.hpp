// The fake NVML with a scenario from tests/fakes/scenarios, for the tests that load it directly.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

inline NvmlApi fake_nvml(const char* scenario) {
    setenv("GPUVET_FAKE_SCENARIO", (std::string(FAKE_SCENARIO_DIR) + "/" + scenario).c_str(), 1);
    NvmlApi api = NvmlApi::load_file(FAKE_NVML);
    EXPECT_TRUE(api.ok()) << api.error;
    return api;
}

}  // namespace gpuvet
