// Pure decoders of AMD SMI answers: gfx targets, PCIe speeds, PCI addresses, partition names.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gpuvet::amd_decode {

// AMD SMI's target_graphics_version back to the gfx target's name. ROCm SMI builds the number
// from KFD's gfx_target_version MMmmrr as M*100 + m*10 + r, or M*1000 + r when m is 0
// (rocm_smi_lib src/rocm_smi_utils.cc, rsmi_get_gfx_target_version), so 942 is gfx942, 9010
// gfx90a, 11000 gfx1100. nullopt for the "unknown" value (UINT64_MAX) and numbers that fit neither.
std::optional<std::string> gfx_target_name(std::uint64_t v);
// The architecture of a gfx target: "CDNA 3" for gfx942 (AMD's LLVM AMDGPU processor table).
std::optional<std::string> architecture_of(const std::string& gfx_target);
// The PCIe generation of a link speed in MT/s (2500 -> 1 ... 64000 -> 6).
std::optional<int> pcie_gen_of_mts(std::uint32_t mts);
// "0000:05:00.0" from AMD SMI's packed BDF: domain << 32 | bus << 8 | device << 3 | function.
std::string pci_bus_id_of(std::uint64_t bdf);
// The C string in a fixed-size buffer, without trailing blanks; empty when the buffer holds none.
std::string text_of(const char* buf, std::size_t size);

}  // namespace gpuvet::amd_decode
