// Reads what HIP reads from an AMDGPU code object (an HSA ELF shared object): the ELF header's
// machine, OS ABI, ABI version and e_flags (the gfx target, xnack and sramecc settings), the
// dynamic symbols (each kernel and its kernel descriptor `name.kd`), and the kernels' argument
// layout from the NT_AMDGPU_METADATA note (MessagePack; LLVM's AMDGPUUsage "Code Object V3 to V5
// Metadata"). Used by the HIP double to load code objects as HIP does, and by the tests that
// validate the code objects gpuvet embeds. Throws std::runtime_error naming what is malformed.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fake::amdgpu {

inline constexpr uint16_t kEmAmdgpu = 224;       // e_machine EM_AMDGPU
inline constexpr uint8_t kOsAbiAmdgpuHsa = 64;   // EI_OSABI ELFOSABI_AMDGPU_HSA
inline constexpr uint32_t kMachMask = 0x0ff;     // EF_AMDGPU_MACH
inline constexpr uint32_t kXnackMask = 0x300;    // EF_AMDGPU_FEATURE_XNACK_V4
inline constexpr uint32_t kSramEccMask = 0xc00;  // EF_AMDGPU_FEATURE_SRAMECC_V4
inline constexpr uint32_t kFeatureAny = 0x100;   // ..._ANY_V4 (shifted into each field below)

struct KernelArg {
    uint32_t size = 0, offset = 0;
    std::string value_kind;  // "global_buffer", "by_value", "hidden_..."
    std::string name;        // the source's parameter name, when recorded
};
struct Kernel {
    std::string name;
    std::vector<KernelArg> args;  // explicit arguments first, hidden ones after, as laid out
    uint32_t kernarg_segment_size = 0;
    bool has_descriptor = false;  // the symbol `name.kd` is defined
};

struct CodeObject {
    uint16_t machine = 0;
    uint8_t os_abi = 0, abi_version = 0;  // ABI version 2 = code object v4, 3 = v5
    uint32_t e_flags = 0;
    std::string target;                // metadata amdhsa.target: "amdgcn-amd-amdhsa--gfx942"
    std::vector<std::string> symbols;  // defined dynamic symbols
    std::map<std::string, Kernel> kernels;
};

CodeObject parse(std::string_view image);
// "gfx942" for an EF_AMDGPU_MACH value, empty when unknown.
std::string gfx_of_mach(uint32_t mach);
std::optional<uint32_t> mach_of_gfx(std::string_view gfx);
// "gfx942" from KFD's number as AMD SMI reports it (942, 9010 = gfx90a, 11000 = gfx1100).
std::string gfx_of_target_version(uint64_t v);

}  // namespace fake::amdgpu
