// Small helpers shared by the check tests.
#pragma once
#include <filesystem>
#include <string>

#include "core/result.hpp"

// A measurement of a result by key, or nullptr.
inline const gpuvet::Measurement* find(const gpuvet::CheckResult& r, const std::string& key) {
    for (auto& m : r.measurements)
        if (m.key == key) return &m;
    return nullptr;
}

// A fixture host tree under tests/fixtures/hosts, for the GPUVET_ROOT seam.
inline std::filesystem::path fixture(const char* name) {
    return std::filesystem::path(GPUVET_TEST_DIR) / "fixtures" / "hosts" / name;
}
