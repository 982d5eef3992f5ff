// PTX text -> decoded Module for the interpreter. Accepts the subset gpuvet's kernels use
// (docs/kernels.md "Interpreter subset"); anything else throws LoadError naming the line.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ptx_lex.hpp"
#include "ptx_module.hpp"

namespace fake::ptx {

Module parse(const std::string& text);

// What decoding an instruction needs to know about the function it is in (ptx_decode.cpp).
struct FunctionScope {
    const Module& module;
    Function& f;
    std::map<std::string, uint32_t> regs;
    std::vector<std::map<std::string, Param>> params;  // .param scopes, innermost last
    std::vector<std::pair<uint32_t, Token>> branches;  // instruction index -> label it jumps to

    const Param* find_param(const std::string& name) const {
        for (auto it = params.rbegin(); it != params.rend(); ++it)
            if (auto p = it->find(name); p != it->end()) return &p->second;
        return nullptr;
    }
};
using Operands = std::vector<std::vector<Token>>;

// Appends the decoded instruction to fs.f.code. guard: predicate register name or empty.
void decode(FunctionScope& fs, const Token& opcode, const std::string& guard, bool guard_neg, const Operands& ops);

}  // namespace fake::ptx
