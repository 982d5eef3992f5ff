// The total memory a driver reports for a SKU in a given ECC state: what gpu.identity and
// order.gpu_memory hold a GPU to. The datasheet's "48GB" is a size as sold; GDDR boards with ECC on
// keep part of it for the check bits (an L40S shows 46068 MiB), HBM boards hold back a little
// for firmware (an H100 SXM shows 81559 of 81920 MiB). Values and sources: docs/gpu-specs.md.
#pragma once
#include <optional>
#include <string>

namespace gpuvet {

struct GpuSpec;

// Healthy boards of one SKU can show less than the published figure: driver generations
// differ by up to 1.04% (A100-SXM4-40GB: 40960 MiB on R580, 40536 on R470) and CUDA's total, used
// when NVML cannot be read, leaves out the driver's reservation (A100-SXM4-40GB: 40339 MiB, 1.52%
// under nvidia-smi). 2% covers both; the nearest pair it must still tell apart, GDDR with ECC on
// and off, is 6.25% apart, and a card sold with the wrong size is 50% short.
inline constexpr double kDriverMemoryTolerance = 0.02;

// GDDR memory with ECC on stores the check bits in band: 1/16 of the memory is not reported
// (T4: 15360 of 16384 MiB; A10 23028 and L4 23034 of 24576; L40S 46068 of 49152).
inline constexpr double kInbandEccShare = 1.0 / 16;

struct DriverMemoryExpectation {
    double expected_mib = 0;
    double low_mib = 0;     // below: fewer MiB than any healthy board of this SKU shows
    double high_mib = 0;    // above: more than this SKU has
    std::string ecc_state;  // "ECC on", "ECC off", "ECC on or off" (state not read)
    std::string basis;      // where expected_mib comes from: a published figure or the rule
};

// GDDR boards lose the in-band ECC share when ECC is on; HBM carries ECC beside the data.
bool ecc_changes_capacity(const std::string& memory_type);

// For a SKU: its published driver figure for the ECC state when the database has one, else the rule
// (size as sold, less the in-band ECC share on GDDR with ECC on). An unknown ECC state on GDDR
// accepts either state's figure.
DriverMemoryExpectation expected_driver_memory(const GpuSpec& spec, std::optional<bool> ecc_enabled);

// The rule alone, for a size as sold with no SKU behind it (an order's "48GB" on an unknown card):
// the memory type is unknown, so ECC on (or unknown) allows the GDDR share.
DriverMemoryExpectation expected_driver_memory_for_size(double sold_gib, std::optional<bool> ecc_enabled);

// "46068 MiB (44.99 GiB)"
std::string mib_and_gib(double mib);

}  // namespace gpuvet
