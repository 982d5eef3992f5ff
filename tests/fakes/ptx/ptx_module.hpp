// A PTX module decoded for the interpreter: every instruction resolved at load time to a handler
// and fixed operand slots (register indexes, immediates, parameter offsets, branch targets), so
// execution never looks at text. Built by ptx::parse (ptx_parse.cpp), run by ptx::launch (ptx_exec.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fake::ptx {

// Register 0..11 of every frame hold the special registers, set per thread before it runs.
enum Special : uint32_t {
    tid_x,
    tid_y,
    tid_z,
    ntid_x,
    ntid_y,
    ntid_z,
    ctaid_x,
    ctaid_y,
    ctaid_z,
    nctaid_x,
    nctaid_y,
    nctaid_z,
    kSpecials
};

struct Operand {
    bool is_reg = false;
    uint32_t reg = 0;  // register index in the frame
    uint64_t imm = 0;  // raw bits of an immediate (f32 in the low 32 bits)
};

struct Thread;
struct Instr;
// Executes one instruction; returns the index of the next one, or kRet (return from this frame),
// kCall (a frame was pushed: continue at its first instruction) or kFault (ptx_thread.hpp).
using Handler = uint32_t (*)(Thread&, const Instr&, uint32_t pc);
constexpr uint32_t kRet = 0xFFFFFFFFu;
constexpr uint32_t kCall = 0xFFFFFFFDu;

struct Instr {
    Handler run = nullptr;
    int32_t guard = -1;      // predicate register, -1 when unguarded
    bool guard_neg = false;  // @!p
    bool divergent = false;  // reads %tid/%ctaid or writes global memory (ends the shared prefix)
    uint8_t vec = 1;         // ld/st .v2/.v4
    uint8_t width = 0;       // access size in bytes (ld/st/atom), or shift width in bits
    Operand d, a, b, c;      // destination and sources as the instruction needs them
    uint32_t vregs[4] = {};  // ld/st .v4 registers (st: a register or, with is_imm bit, see vimm)
    uint64_t vimm[4] = {};
    uint8_t vis_reg = 0;      // bit k: vregs[k] is a register (else vimm[k])
    bool addr_param = false;  // address is a .param offset (in `offset`) instead of a register + offset
    int64_t offset = 0;
    uint32_t target = 0;  // bra: instruction index; call: index into Function::calls
    int line = 0;         // source line, for errors
};

struct ParamCopy {
    uint32_t from, to, bytes;
};
struct Call {
    uint32_t callee = 0;          // index into Module::functions
    std::vector<ParamCopy> args;  // caller frame -> callee frame
    std::vector<ParamCopy> rets;  // callee frame -> caller frame, after its ret
};

struct Param {
    std::string name;
    uint32_t bytes = 0, offset = 0;
};

struct Function {
    std::string name;
    bool entry = false;
    std::vector<Param> params;  // entry: kernel parameters in order; func: arguments
    std::vector<Param> rets;    // func: return parameters
    uint32_t param_bytes = 0;   // frame parameter area (declared and block-scoped .param)
    uint32_t regs = kSpecials;  // frame register count
    std::vector<Instr> code;
    std::vector<Call> calls;
};

struct Module {
    std::vector<Function> functions;
    std::map<std::string, uint32_t> by_name;
};

}  // namespace fake::ptx
