// The ROCm bindings: Debian's real librocm_smi64 (ROCm 5.2) and libamdhip64, and a minimal AMD SMI
// double. None of them needs an AMD GPU: these tests load and resolve, and call only what answers
// without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "gpu/bindings/amd_smi_api.hpp"
#include "gpu/bindings/hip_api.hpp"
#include "gpu/bindings/rocm_smi_api.hpp"

using namespace gpuvet;

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST(RocmSmiBinding, DebianRocm52ResolvesEverySymbolItHasAndListsTheNewerOnesMissing) {
    RocmSmiApi api = RocmSmiApi::load_file(ROCM_SMI_LIBRARY);
    ASSERT_TRUE(api.ok()) << api.error;
    EXPECT_NE(api.rsmi_dev_ecc_count_get, nullptr);
    EXPECT_NE(api.rsmi_dev_memory_reserved_pages_get, nullptr);
    EXPECT_NE(api.rsmi_topo_get_link_type, nullptr);
    EXPECT_NE(api.rsmi_compute_process_info_get, nullptr);
    // The partition modes came with ROCm 6: absent here, each one a missing optional symbol.
    EXPECT_EQ(api.rsmi_dev_compute_partition_get, nullptr);
    EXPECT_EQ(api.rsmi_dev_memory_partition_get, nullptr);
    EXPECT_TRUE(contains(api.symbols.missing_optional, "rsmi_dev_compute_partition_get"));
    EXPECT_TRUE(contains(api.symbols.missing_optional, "rsmi_dev_memory_partition_get"));
    EXPECT_EQ(api.symbols.missing_optional.size(), 2u) << "5.2 has every other symbol gpuvet binds";
    EXPECT_EQ(driver_lacks("rsmi_dev_compute_partition_get"), "driver lacks rsmi_dev_compute_partition_get");
}

TEST(RocmSmiBinding, VersionSaysWhichFrequenciesLayoutTheLibraryWrites) {
    RocmSmiApi api = RocmSmiApi::load_file(ROCM_SMI_LIBRARY);
    ASSERT_TRUE(api.ok()) << api.error;
    ASSERT_NE(api.rsmi_version_get, nullptr);
    rsmi::rsmi_version_t v{};
    ASSERT_EQ(api.rsmi_version_get(&v), rsmi::RSMI_STATUS_SUCCESS);
    EXPECT_LT(v.major, 7u);  // Debian's 5.2 build reports 1.0.0
    EXPECT_EQ(frequencies_layout_of(v), RsmiFrequenciesLayout::V5);
    EXPECT_EQ(frequencies_layout_of({7, 0, 0, nullptr}), RsmiFrequenciesLayout::V7);  // ROCm 6.0
    EXPECT_EQ(frequencies_layout_of({5, 0, 0, nullptr}), RsmiFrequenciesLayout::V5);  // ROCm 5.7
}

TEST(RocmSmiBinding, StatusNamesMatchTheLibrarysOwn) {
    RocmSmiApi api = RocmSmiApi::load_file(ROCM_SMI_LIBRARY);
    ASSERT_TRUE(api.ok()) << api.error;
    // rsmi_status_string spells "RSMI_STATUS_PERMISSION: ..."; our table's name starts it.
    for (unsigned code : {1u, 2u, 4u}) {
        EXPECT_EQ(api.error_name(code).rfind(rsmi_status_name(code), 0), 0u) << api.error_name(code);
    }
    EXPECT_EQ(rsmi_status_name(4242), "RSMI_STATUS_4242");
    EXPECT_NE(rsmi_absent_reason(4).find("video and render groups"), std::string::npos);
    EXPECT_EQ(rsmi_absent_reason(2), "not supported by this GPU or driver");
}

TEST(AmdSmiBinding, OnlyTheFourRequiredCallsAreNeeded) {
    AmdSmiApi api = AmdSmiApi::load_file(AMD_SMI_MINIMAL);
    ASSERT_TRUE(api.ok()) << api.error;
    EXPECT_EQ(api.symbols.missing_optional.size(), amd_smi_symbol_table().size() - 4);
    EXPECT_TRUE(contains(api.symbols.missing_optional, "amdsmi_get_gpu_compute_partition"));
    EXPECT_EQ(api.amdsmi_get_gpu_asic_info, nullptr);
    ASSERT_EQ(api.amdsmi_init(amdsmi::kInitAmdGpus), amdsmi::AMDSMI_STATUS_SUCCESS);
    uint32_t sockets = 1;
    amdsmi::amdsmi_socket_handle socket = nullptr;
    ASSERT_EQ(api.amdsmi_get_socket_handles(&sockets, &socket), amdsmi::AMDSMI_STATUS_SUCCESS);
    uint32_t gpus = 1;
    amdsmi::amdsmi_processor_handle gpu = nullptr;
    EXPECT_EQ(api.amdsmi_get_processor_handles(socket, &gpus, &gpu), amdsmi::AMDSMI_STATUS_SUCCESS);
    EXPECT_EQ(gpus, 1u);
    EXPECT_NE(gpu, nullptr);
    // Without amdsmi_status_code_to_string the names come from our table.
    EXPECT_EQ(api.error_name(10), "AMDSMI_STATUS_NO_PERM");
}

TEST(AmdSmiBinding, MissingRequiredSymbolMakesLibraryUnusable) {
    AmdSmiApi api = AmdSmiApi::load_file(AMD_SMI_NO_HANDLES);
    EXPECT_FALSE(api.ok());
    EXPECT_NE(api.error.find("lacks amdsmi_get_processor_handles"), std::string::npos) << api.error;
}

TEST(AmdSmiBinding, NoRocmSaysWhatWasTried) {
    setenv(kEnvLibAmdSmi, "/nonexistent/libamd_smi.so", 1);
    AmdSmiApi api = AmdSmiApi::load();
    unsetenv(kEnvLibAmdSmi);
    EXPECT_FALSE(api.ok());
    EXPECT_EQ(api.error.rfind("libamd_smi.so could not be loaded: /nonexistent/libamd_smi.so", 0), 0u) << api.error;
    EXPECT_EQ(amd_smi_candidates().front(), "libamd_smi.so.26");
    EXPECT_EQ(amdsmi_status_name(0xFFFFFFFE), "AMDSMI_STATUS_MAP_ERROR");
    EXPECT_NE(amdsmi_absent_reason(34).find("modprobe amdgpu"), std::string::npos);
}

TEST(HipBinding, DebianHipResolvesAndItsErrorNamesMatchOurs) {
    HipApi api = HipApi::load_file(HIP_LIBRARY);
    ASSERT_TRUE(api.ok()) << api.error;
    EXPECT_TRUE(api.symbols.missing_optional.empty());
    ASSERT_NE(api.hipGetErrorName, nullptr);
    for (unsigned code : {0u, 1u, 2u, 3u, 100u, 101u, 200u, 209u, 218u, 700u, 702u, 719u, 999u, 1052u, 1053u}) {
        EXPECT_EQ(api.error_name(code), hip_status_name(code)) << code;
    }
    // On this machine, with no AMD GPU, HIP answers "no device" at once; on one with a GPU, a count.
    int n = -1;
    hip::hipError_t r = api.hipGetDeviceCount(&n);
    EXPECT_TRUE(r == hip::hipSuccess || r == hip::hipErrorNoDevice) << hip_status_name(r);
    EXPECT_NE(hip_advice(hip::hipErrorNoBinaryForGpu).find("gfx target"), std::string::npos);
}

TEST(HipBinding, NoRocmSaysWhatWasTried) {
    setenv(kEnvLibHip, "/nonexistent/libamdhip64.so", 1);
    HipApi api = HipApi::load();
    unsetenv(kEnvLibHip);
    EXPECT_FALSE(api.ok());
    EXPECT_NE(api.error.find("libamdhip64.so could not be loaded"), std::string::npos) << api.error;
}
