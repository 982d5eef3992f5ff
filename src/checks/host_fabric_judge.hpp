// host.fabric's judge: the RDMA fabric as sysfs showed it (host/fabric.hpp) in, measurements,
// findings with their consequence and fix, and a verdict out. Pure: the tests call it on fixtures.
#pragma once
#include "core/result.hpp"
#include "host/fabric.hpp"

namespace gpuvet {

CheckResult judge_fabric(const FabricFacts& f);

// Bytes per second a PCIe link carries one way after line encoding (8b/10b up to 5 GT/s,
// 128b/130b from 8 GT/s, FLIT at 64 GT/s), in Gbit/s so it compares with a port's rate.
double pcie_payload_gbitps(double speed_gts, int width);

// True when the NVIDIA kernel module and the kernel allow GPUDirect RDMA through DMA-BUF (the
// open kernel module on Linux 5.12 or later), so nvidia-peermem is not needed.
bool dmabuf_possible(const FabricFacts& f);

}  // namespace gpuvet
