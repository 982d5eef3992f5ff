// The AMD code objects gpuvet embeds, one per declared gfx target (GPUVET_AMDGPU_TARGETS): each is
// an HSA code object for its target (machine, OS ABI, code object version, e_flags), defines every
// kernel of the catalogue with its kernel descriptor, and lays out each kernel's explicit
// arguments as gpuvet passes them to hipModuleLaunchKernel (count, sizes, pointers as buffers).
#include <gtest/gtest.h>

#include <sstream>

#include "amdgpu_elf.hpp"
#include "gpu/amd_kernels.hpp"

namespace {

namespace ak = gpuvet::amd_kernels;
namespace elf = fake::amdgpu;

std::vector<std::string> declared_targets() {
    std::vector<std::string> out;
    std::stringstream ss(DECLARED_AMDGPU_TARGETS);
    for (std::string t; std::getline(ss, t, ',');) out.push_back(t);
    return out;
}

class CodeObject : public ::testing::TestWithParam<std::string> {};

TEST_P(CodeObject, IsAnHsaCodeObjectForItsTarget) {
    const std::string gfx = GetParam();
    const ak::CodeObject* co = ak::code_object_for(gfx);
    ASSERT_NE(co, nullptr) << "no code object embedded for " << gfx;
    const elf::CodeObject o = elf::parse(co->bytes());
    EXPECT_EQ(o.machine, elf::kEmAmdgpu);
    EXPECT_EQ(o.os_abi, elf::kOsAbiAmdgpuHsa);
    EXPECT_EQ(o.abi_version, ak::code_object_version() - 2)
        << "ELFABIVERSION_AMDGPU_HSA_V" << ak::code_object_version();
    EXPECT_EQ(elf::gfx_of_mach(o.e_flags & elf::kMachMask), gfx);
    EXPECT_EQ(o.target, "amdgcn-amd-amdhsa--" + gfx);
    // CDNA and Vega 20 have xnack and sramecc modes: the object must load under either setting.
    const bool gfx9 = gfx.rfind("gfx9", 0) == 0;
    EXPECT_EQ(o.e_flags & elf::kXnackMask, gfx9 ? elf::kFeatureAny : 0u) << std::hex << o.e_flags;
    EXPECT_EQ(o.e_flags & elf::kSramEccMask, gfx9 ? elf::kFeatureAny << 2 : 0u) << std::hex << o.e_flags;
}

TEST_P(CodeObject, DefinesEveryKernelWithTheArgumentsGpuvetPasses) {
    const elf::CodeObject o = elf::parse(ak::code_object_for(GetParam())->bytes());
    for (const ak::KernelInfo& k : ak::catalogue()) {
        auto it = o.kernels.find(std::string(k.name));
        ASSERT_NE(it, o.kernels.end()) << k.name << " missing from the metadata";
        const elf::Kernel& m = it->second;
        EXPECT_TRUE(m.has_descriptor) << k.name << ".kd is not defined";
        EXPECT_NE(std::find(o.symbols.begin(), o.symbols.end(), std::string(k.name)), o.symbols.end());
        std::vector<elf::KernelArg> expl;
        for (const auto& a : m.args)
            if (a.value_kind.rfind("hidden_", 0) != 0) expl.push_back(a);
        ASSERT_EQ(expl.size(), k.params.size()) << k.name;
        for (std::size_t i = 0; i < expl.size(); ++i) {
            EXPECT_EQ(expl[i].size, gpuvet::kernels::param_bytes(k.params[i])) << k.name << " argument " << i;
            EXPECT_EQ(expl[i].value_kind, k.params[i] == gpuvet::kernels::Param::ptr ? "global_buffer" : "by_value")
                << k.name << " argument " << i;
            EXPECT_EQ(expl[i].offset % expl[i].size, 0u) << "naturally aligned";
        }
        EXPECT_GE(m.kernarg_segment_size, expl.back().offset + expl.back().size);
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, CodeObject, ::testing::ValuesIn(declared_targets()),
                         [](const auto& info) { return info.param; });

TEST(CodeObjects, OnePerDeclaredTargetAndNoOther) {
    std::vector<std::string> embedded;
    for (const auto& c : ak::code_objects()) embedded.emplace_back(c.gfx);
    EXPECT_EQ(embedded, declared_targets());
    for (const char* needed : {"gfx908", "gfx90a", "gfx942", "gfx1100"})  // MI100, MI210/MI250X, MI300X/MI325X, W7900
        EXPECT_NE(ak::code_object_for(needed), nullptr) << needed;
    EXPECT_EQ(ak::code_object_for("gfx940"), nullptr) << "a gfx942 GPU refuses gfx940 objects: never a fallback";
}

TEST(CodeObjects, AMalformedImageIsNamedNotCrashedOn) {
    std::string co(ak::code_object_for("gfx942")->bytes());
    EXPECT_THROW(elf::parse(co.substr(0, 40)), std::runtime_error);
    co[4] = 1;  // a 32-bit ELF
    EXPECT_THROW(elf::parse(co), std::runtime_error);
}

}  // namespace
