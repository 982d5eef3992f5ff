// The state of one interpreted PTX thread, shared by the instruction handlers (ptx_ops*.cpp) and
// the launcher (ptx_exec.cpp). Registers are raw 64-bit slots; a frame per active call.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ptx_module.hpp"

namespace fake::ptx {

// A piece of device memory the launcher resolved: [lo, hi) backed by host bytes at `host`.
// `watch`: stores into it are reported (the fake corrupts bad memory cells after the launch).
struct Region {
    uint64_t lo = 0, hi = 0;
    unsigned char* host = nullptr;
    bool watch = false;
};
using Resolver = std::function<Region(uint64_t addr)>;  // host == nullptr: not device memory

enum class Fault { none, illegal_address, misaligned_address, instruction_budget };

struct Frame {
    const Function* f = nullptr;
    uint32_t pc = 0, reg_base = 0, param_base = 0;
    uint32_t call = 0;  // index of the Call in the caller being executed (for the return copies)
};

struct Thread {
    const Module* module = nullptr;
    std::vector<uint64_t> regs;         // all frames' registers, stacked
    std::vector<unsigned char> params;  // all frames' .param areas, stacked
    std::vector<Frame> frames;
    uint64_t* R = nullptr;       // current frame's registers
    unsigned char* P = nullptr;  // current frame's .param area
    const Resolver* resolve = nullptr;
    Region cache[4];  // regions used last (a kernel touches a few buffers)
    unsigned next_slot = 0;
    std::vector<std::pair<uint64_t, unsigned>>* watched = nullptr;
    uint64_t budget = 0;  // branches and calls this launch may still take
    Fault fault = Fault::none;
    std::string fault_text;

    void rebase() {
        R = regs.data() + frames.back().reg_base;
        P = params.data() + frames.back().param_base;
    }
    // Host bytes of a global access of `n` bytes at device address `addr`, or nullptr after
    // recording the fault (unaligned or outside every allocation, as the GPU faults).
    [[gnu::always_inline]] unsigned char* global(uint64_t addr, unsigned n, const Instr& in, bool store) {
        if (addr % n) return fail(Fault::misaligned_address, addr, in), nullptr;
        for (const Region& r : cache)
            if (addr >= r.lo && addr + n <= r.hi) return hit(r, addr, n, store);
        return miss(addr, n, in, store);
    }
    unsigned char* miss(uint64_t addr, unsigned n, const Instr& in, bool store) {
        Region r = (*resolve)(addr);
        if (!r.host || addr + n > r.hi) return fail(Fault::illegal_address, addr, in), nullptr;
        cache[next_slot++ % 4] = r;
        return hit(r, addr, n, store);
    }
    unsigned char* hit(const Region& r, uint64_t addr, unsigned n, bool store) {
        if (store && r.watch && watched) watched->emplace_back(addr, n);
        return r.host + (addr - r.lo);
    }
    void fail(Fault f, uint64_t addr, const Instr& in);
};

constexpr uint32_t kFault = 0xFFFFFFFEu;  // handler result: the thread faulted

}  // namespace fake::ptx
