// The driver problems named first in every report: each cause with its fix, and none on a healthy box.
#include <gtest/gtest.h>

#include "gpu/driver_problems.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {
namespace {

Inventory box(int n, bool cuda) {
    Inventory inv;
    inv.nvml_present = true;
    inv.cuda_present = cuda;
    for (int i = 0; i < n; ++i) {
        GpuInfo g;
        g.index = i;
        g.mig_enabled = false;
        if (cuda) g.cuda_ordinal = i;
        else g.cuda_ordinal = Fact<int>::absent("cuInit failed");
        inv.gpus.push_back(g);
    }
    return inv;
}

TEST(DriverProblems, HealthyBoxHasNone) { EXPECT_TRUE(diagnose_driver(box(8, true), nullptr).empty()); }

TEST(DriverProblems, KernelModuleNotLoadedSaysHowToLoadIt) {
    Inventory inv;
    inv.nvml_init_status = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
    auto p = diagnose_driver(inv, nullptr);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].headline, "the NVIDIA kernel module is not loaded");
    EXPECT_NE(p[0].advice.find("modprobe nvidia"), std::string::npos);
}

TEST(DriverProblems, MigOnEveryGpuIsNamedWithTheFix) {
    Inventory inv = box(2, false);
    inv.cuda_init_status = 100;  // CUDA_ERROR_NO_DEVICE
    for (auto& g : inv.gpus) g.mig_enabled = true;
    auto p = diagnose_driver(inv, nullptr);
    ASSERT_EQ(p.size(), 1u) << p[1].message;  // the MIG problem explains CUDA's failure: no second one
    EXPECT_NE(p[0].headline.find("MIG mode is on for GPUs 0, 1"), std::string::npos) << p[0].headline;
    EXPECT_NE(p[0].message.find("cuInit finds no device"), std::string::npos);
    EXPECT_NE(p[0].advice.find("nvidia-smi -i 0 -mig 0"), std::string::npos);
}

TEST(DriverProblems, CudaMissingWhileNvmlWorksNamesBothSides) {
    Inventory inv = box(1, false);
    inv.cuda_absent_reason = "libcuda.so.1 could not be loaded";
    auto p = diagnose_driver(inv, nullptr);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].message.find("NVML sees 1 GPU"), std::string::npos) << p[0].message;
    EXPECT_NE(p[0].advice.find("GPUVET_LIBCUDA"), std::string::npos);
}

TEST(DriverProblems, GpusHiddenByCudaVisibleDevices) {
    Inventory inv = box(4, true);
    inv.gpus[2].cuda_ordinal = Fact<int>::absent("hidden");
    inv.gpus[3].cuda_ordinal = Fact<int>::absent("hidden");
    auto p = diagnose_driver(inv, "0,1");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].headline, "GPUs 2, 3 hidden from CUDA by CUDA_VISIBLE_DEVICES=0,1");
    auto q = diagnose_driver(inv, nullptr);
    ASSERT_EQ(q.size(), 1u);
    EXPECT_EQ(q[0].headline, "NVML lists GPUs 2, 3 but CUDA does not see them");
    EXPECT_EQ(cuda_invisible_reason(inv.gpus[2], "0,1"), "hidden from CUDA by CUDA_VISIBLE_DEVICES=0,1");
}

}  // namespace
}  // namespace gpuvet
