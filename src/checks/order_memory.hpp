// order.gpu_memory: does every GPU have the memory per GPU that was ordered? The order's "48GB" is a
// size as sold; the driver shows less (GDDR with ECC on keeps 1/16, HBM boards a little for firmware),
// so a GPU whose SKU is sold with at least that size and whose driver figure matches the SKU fulfils it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

class SpecDb;

// `ordered_gib`: per GPU, as sold; `from_order`: written in the order (else the ordered model's size);
// `absent`: why no GPU can be seen, when none can.
CheckResult verify_gpu_memory(double ordered_gib, bool from_order, const std::vector<GpuInfo>& gpus,
                              const std::optional<std::string>& absent, const SpecDb& db);

}  // namespace gpuvet
