// Instruction semantics of the PTX interpreter: one handler per opcode with its type suffixes
// ("add.u64", "ld.global.v4.u32", "fma.rn.bf16x2"), looked up once when a module is loaded.
#pragma once
#include <string>

#include "ptx_thread.hpp"

namespace fake::ptx {

// The handler for a normalised opcode (guard removed, ".uni" dropped), or nullptr when the
// interpreter does not implement it (the module is then refused at load time).
Handler find_handler(const std::string& opcode);

// True when opcode reads or writes memory through an address operand: kind 'l' load, 's' store,
// 'a' atomic; `param` tells the .param state space from .global.
struct MemoryOp {
    char kind = 0;
    bool param = false;
    unsigned width = 0, vec = 1;
};
MemoryOp memory_op(const std::string& opcode);

uint32_t op_call(Thread& t, const Instr& in, uint32_t pc);
uint32_t op_bra(Thread& t, const Instr& in, uint32_t pc);
uint32_t op_ret(Thread& t, const Instr& in, uint32_t pc);

}  // namespace fake::ptx
