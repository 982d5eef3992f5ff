#include "ptx_exec.hpp"

#include <cstdio>

#include "ptx_ops.hpp"

namespace fake::ptx {

void Thread::fail(Fault f, uint64_t addr, const Instr& in) {
    fault = f;
    char a[32];
    std::snprintf(a, sizeof a, "0x%llx", static_cast<unsigned long long>(addr));
    const std::string where = std::string(" in ") + frames.back().f->name + " at PTX line " + std::to_string(in.line);
    if (f == Fault::misaligned_address) fault_text = std::string("misaligned access to ") + a + where;
    else if (f == Fault::illegal_address)
        fault_text = std::string("access to ") + a + " outside every allocation" + where;
    else fault_text = "branch budget exhausted" + where;
}

namespace {

enum class Stop { done, fault, divergent };

// Pops a returning .func frame, copying its return parameters into the caller's block params.
void pop_frame(Thread& t) {
    const Frame callee = t.frames.back();
    t.frames.pop_back();
    const Frame& caller = t.frames.back();
    for (const ParamCopy& p : caller.f->calls[callee.call].rets)
        std::memcpy(&t.params[caller.param_base + p.to], &t.params[callee.param_base + p.from], p.bytes);
    t.regs.resize(callee.reg_base);
    t.params.resize(callee.param_base);
    t.rebase();
}

// Runs until the entry returns, a fault, or (Prefix) the first divergent instruction.
template <bool Prefix>
Stop run(Thread& t) {
    uint32_t pc = t.frames.back().pc;
    const Instr* code = t.frames.back().f->code.data();
    for (;;) {
        const Instr& in = code[pc];
        if constexpr (Prefix) {
            if (in.divergent) {
                t.frames.back().pc = pc;
                return Stop::divergent;
            }
        }
        if (in.guard >= 0 && (t.R[in.guard] != 0) == in.guard_neg) {
            ++pc;
            continue;
        }
        const uint32_t next = in.run(t, in, pc);
        if (next < kCall) {
            pc = next;
            continue;
        }
        if (next == kFault) return Stop::fault;
        if (next == kRet) {
            if (t.frames.size() == 1) return Stop::done;
            pop_frame(t);
        }
        pc = next == kCall ? 0 : t.frames.back().pc;
        code = t.frames.back().f->code.data();
    }
}

Thread first_thread(const Module& m, uint32_t entry, const LaunchConfig& c) {
    const Function& f = m.functions[entry];
    Thread t;
    t.module = &m;
    t.regs.reserve(4 * f.regs + 256);
    t.params.reserve(4 * f.param_bytes + 256);
    t.regs.assign(f.regs, 0);
    t.params.assign(f.param_bytes, 0);
    // The driver reads each parameter's declared size from kernelParams[i].
    for (size_t i = 0; i < f.params.size(); ++i)
        std::memcpy(&t.params[f.params[i].offset], c.params[i], f.params[i].bytes);
    Frame fr;
    fr.f = &f;
    t.frames.push_back(fr);
    for (int k = 0; k < 3; ++k) {
        t.regs[ntid_x + k] = c.block[k];
        t.regs[nctaid_x + k] = c.grid[k];
    }
    t.resolve = &c.resolve;
    t.watched = c.watched;
    t.rebase();
    return t;
}

LaunchResult fault_result(const Thread& t) { return {t.fault, t.fault_text}; }

}  // namespace

LaunchResult launch(const Module& m, uint32_t entry, const LaunchConfig& c) {
    Thread proto = first_thread(m, entry, c);
    proto.budget = c.budget;
    Stop s = run<true>(proto);
    if (s == Stop::fault) return fault_result(proto);
    if (s == Stop::done) return {};  // no thread writes memory
    Thread t = proto;                // reused for every thread, so its budget is what all of them have left
    for (unsigned cz = 0; cz < c.grid[2]; ++cz)
        for (unsigned cy = 0; cy < c.grid[1]; ++cy)
            for (unsigned cx = 0; cx < c.grid[0]; ++cx)
                for (unsigned tz = 0; tz < c.block[2]; ++tz)
                    for (unsigned ty = 0; ty < c.block[1]; ++ty)
                        for (unsigned tx = 0; tx < c.block[0]; ++tx) {
                            t.regs = proto.regs;
                            t.params = proto.params;
                            t.frames = proto.frames;
                            const unsigned id[6] = {tx, ty, tz, cx, cy, cz};
                            for (const Frame& fr : t.frames)
                                for (int k = 0; k < 3; ++k) {
                                    t.regs[fr.reg_base + tid_x + k] = id[k];
                                    t.regs[fr.reg_base + ctaid_x + k] = id[3 + k];
                                }
                            t.rebase();
                            if (run<false>(t) == Stop::fault) return fault_result(t);
                        }
    return {};
}

}  // namespace fake::ptx
