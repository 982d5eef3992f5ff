// One PTX instruction -> Instr: the handler for its opcode and its operands resolved to register
// indexes, immediates, .param offsets and (after the function is read) branch targets.
#include <cstdlib>
#include <set>

#include "ptx_ops.hpp"
#include "ptx_parse.hpp"

namespace fake::ptx {

namespace {

const std::map<std::string, uint32_t>& specials() {
    static const std::map<std::string, uint32_t> m = {
        {"%tid.x", tid_x},     {"%tid.y", tid_y},       {"%tid.z", tid_z},       {"%ntid.x", ntid_x},
        {"%ntid.y", ntid_y},   {"%ntid.z", ntid_z},     {"%ctaid.x", ctaid_x},   {"%ctaid.y", ctaid_y},
        {"%ctaid.z", ctaid_z}, {"%nctaid.x", nctaid_x}, {"%nctaid.y", nctaid_y}, {"%nctaid.z", nctaid_z}};
    return m;
}
bool thread_dependent(uint32_t reg) { return reg < kSpecials && (reg <= tid_z || (reg >= ctaid_x && reg <= ctaid_z)); }

uint32_t reg_index(const FunctionScope& fs, const Token& t) {
    if (auto s = specials().find(t.text); s != specials().end()) return s->second;
    auto it = fs.regs.find(t.text);
    if (it == fs.regs.end()) throw LoadError(t.line, "undeclared register '" + t.text + "'");
    return it->second;
}

// Integer literal (decimal, 0x hex) or float bits (0fXXXXXXXX f32, 0dXXXXXXXXXXXXXXXX f64).
uint64_t immediate(const std::vector<Token>& v, size_t& k) {
    bool neg = false;
    if (v[k].text == "-") neg = true, ++k;
    if (k >= v.size()) throw LoadError(v.back().line, "missing number after '-'");
    const Token& t = v[k++];
    std::string s = t.text;
    if (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.pop_back();
    int base = 10;
    size_t skip = 0;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, skip = 2;
    else if (s.size() == 10 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) base = 16, skip = 2;
    else if (s.size() == 18 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) base = 16, skip = 2;
    char* end = nullptr;
    const uint64_t v64 = std::strtoull(s.c_str() + skip, &end, base);
    if (s.size() <= skip || *end) throw LoadError(t.line, "unsupported literal '" + t.text + "'");
    return neg ? 0 - v64 : v64;
}

Operand operand(const FunctionScope& fs, const std::vector<Token>& v) {
    Operand o;
    if (v.empty()) throw LoadError(0, "empty operand");
    if (v.size() == 1 && v[0].text[0] == '%') {
        o.is_reg = true;
        o.reg = reg_index(fs, v[0]);
        return o;
    }
    size_t k = 0;
    o.imm = immediate(v, k);
    if (k != v.size()) throw LoadError(v[k].line, "unsupported operand '" + v[k].text + "'");
    return o;
}

// [reg], [reg+N], [reg-N], [param], [param+N]
void address(const FunctionScope& fs, const std::vector<Token>& v, const MemoryOp& mo, Instr& in) {
    const int line = v.empty() ? 0 : v[0].line;
    if (v.size() < 3 || v.front().text != "[" || v.back().text != "]")
        throw LoadError(line, "expected an address in [ ]");
    const Token& base = v[1];
    int64_t off = 0;
    if (v.size() > 3) {
        if (v[2].text != "+" && v[2].text != "-") throw LoadError(line, "unsupported address form");
        std::vector<Token> num(v.begin() + 3, v.end() - 1);
        size_t k = 0;
        off = static_cast<int64_t>(immediate(num, k));
        if (k != num.size()) throw LoadError(line, "unsupported address form");
        if (v[2].text == "-") off = -off;
    }
    if (mo.param) {
        const Param* p = fs.find_param(base.text);
        if (!p) throw LoadError(line, "'" + base.text + "' is not a .param in scope");
        if (off < 0 || off + mo.width * mo.vec > p->bytes)
            throw LoadError(line, "access past the end of parameter '" + base.text + "'");
        in.addr_param = true;
        in.offset = p->offset + off;
        return;
    }
    if (base.text[0] != '%') throw LoadError(line, "global addresses must be a register (+ offset)");
    in.a.is_reg = true;
    in.a.reg = reg_index(fs, base);
    in.offset = off;
}

// {%r1, %r2, ...} of a vector load/store.
void vector_regs(const FunctionScope& fs, const std::vector<Token>& v, unsigned n, Instr& in, bool store) {
    std::vector<std::vector<Token>> items(1);
    for (size_t k = 1; k + 1 < v.size(); ++k) {
        if (v[k].text == ",") items.emplace_back();
        else items.back().push_back(v[k]);
    }
    if (v.front().text != "{" || items.size() != n)
        throw LoadError(v[0].line, "expected " + std::to_string(n) + " registers in { }");
    for (unsigned k = 0; k < n; ++k) {
        Operand o = operand(fs, items[k]);
        if (!o.is_reg && !store) throw LoadError(v[0].line, "a load needs registers");
        if (o.is_reg) in.vregs[k] = o.reg, in.vis_reg |= uint8_t(1u << k);
        else in.vimm[k] = o.imm;
    }
}

void memory(FunctionScope& fs, const Operands& ops, const MemoryOp& mo, Instr& in) {
    const size_t want = mo.kind == 'a' ? 3 : 2;
    if (ops.size() != want) throw LoadError(in.line, "expected " + std::to_string(want) + " operands");
    const auto& value = mo.kind == 'l' ? ops[0] : ops[1 + (mo.kind == 'a')];
    address(fs, ops[mo.kind == 'l' ? 1 : mo.kind == 'a' ? 1 : 0], mo, in);
    if (mo.kind == 'a') in.d = operand(fs, ops[0]);
    if (mo.vec > 1) vector_regs(fs, value, mo.vec, in, mo.kind == 's');
    else if (mo.kind == 'l') in.d = operand(fs, value);
    else in.b = operand(fs, value);
    if ((mo.kind == 'l' || mo.kind == 'a') && mo.vec == 1 && !in.d.is_reg)
        throw LoadError(in.line, "destination must be a register");
    in.divergent = !mo.param && mo.kind != 'l';
    in.width = static_cast<uint8_t>(mo.width);
    in.vec = static_cast<uint8_t>(mo.vec);
}

// (r) callee, (a, b, ...): copies between the caller's block-scoped .params and the callee's.
void call(FunctionScope& fs, const Operands& ops, Instr& in) {
    auto names = [&](const std::vector<Token>& v) {
        std::vector<Token> out;
        for (const Token& t : v)
            if (t.text != "(" && t.text != ")" && t.text != ",") out.push_back(t);
        return out;
    };
    size_t k = 0;
    std::vector<Token> rets;
    if (!ops.empty() && !ops[0].empty() && ops[0][0].text == "(") rets = names(ops[k++]);
    if (k >= ops.size() || ops[k].size() != 1) throw LoadError(in.line, "expected the called function's name");
    auto callee = fs.module.by_name.find(ops[k][0].text);
    if (callee == fs.module.by_name.end())
        throw LoadError(in.line, "call of undefined function '" + ops[k][0].text + "'");
    std::vector<Token> args = k + 1 < ops.size() ? names(ops[k + 1]) : std::vector<Token>{};
    const Function& f = fs.module.functions[callee->second];
    if (f.entry) throw LoadError(in.line, "call of an .entry");
    if (args.size() != f.params.size() || rets.size() != f.rets.size())
        throw LoadError(in.line, "call of '" + f.name + "' with the wrong number of parameters");
    Call c;
    c.callee = callee->second;
    auto copies = [&](const std::vector<Token>& mine, const std::vector<Param>& theirs, std::vector<ParamCopy>& out,
                      bool in_) {
        for (size_t j = 0; j < mine.size(); ++j) {
            const Param* p = fs.find_param(mine[j].text);
            if (!p || p->bytes != theirs[j].bytes)
                throw LoadError(mine[j].line, "parameter '" + mine[j].text + "' does not match '" + f.name + "'");
            out.push_back(in_ ? ParamCopy{p->offset, theirs[j].offset, p->bytes}
                              : ParamCopy{theirs[j].offset, p->offset, p->bytes});
        }
    };
    copies(args, f.params, c.args, true);
    copies(rets, f.rets, c.rets, false);
    in.target = static_cast<uint32_t>(fs.f.calls.size());
    fs.f.calls.push_back(std::move(c));
}

std::string normalise(std::string op) {
    for (const char* drop : {".uni"})
        if (auto p = op.find(drop); p != std::string::npos && (p + 4 == op.size() || op[p + 4] == '.')) op.erase(p, 4);
    return op;
}

bool is_unary(const std::string& op) {
    for (const char* u : {"mov.", "not.", "abs.", "neg.", "cvt.", "cvta."})
        if (op.starts_with(u)) return true;
    return false;
}

void alu(FunctionScope& fs, const std::string& op, const Operands& ops, Instr& in) {
    const bool three = op.starts_with("mad.") || op.starts_with("fma.") || op.starts_with("selp.");
    const size_t want = is_unary(op) ? 2 : three ? 4 : 3;
    if (ops.size() != want) throw LoadError(in.line, "'" + op + "' takes " + std::to_string(want) + " operands");
    for (const auto& o : ops)
        for (const Token& t : o)
            if (t.text == "|") throw LoadError(t.line, "setp with two destinations is not supported");
    in.d = operand(fs, ops[0]);
    if (!in.d.is_reg) throw LoadError(in.line, "destination must be a register");
    in.a = operand(fs, ops[1]);
    if (want > 2) in.b = operand(fs, ops[2]);
    if (want > 3) in.c = operand(fs, ops[3]);
    if (op.starts_with("selp.") && !in.c.is_reg) throw LoadError(in.line, "selp needs a predicate register");
    for (const Operand* o : {&in.a, &in.b, &in.c})
        if (o->is_reg && thread_dependent(o->reg)) in.divergent = true;
}

}  // namespace

void decode(FunctionScope& fs, const Token& opcode, const std::string& guard, bool guard_neg, const Operands& ops) {
    Instr in;
    in.line = opcode.line;
    const std::string op = normalise(opcode.text);
    in.run = find_handler(op);
    if (!in.run)
        throw LoadError(opcode.line, "instruction '" + opcode.text + "' is not supported by the PTX interpreter");
    if (!guard.empty()) {
        in.guard = static_cast<int32_t>(reg_index(fs, Token{guard, opcode.line}));
        in.guard_neg = guard_neg;
    }
    if (op == "bra") {
        if (ops.size() != 1 || ops[0].size() != 1) throw LoadError(in.line, "bra takes one label");
        fs.branches.emplace_back(static_cast<uint32_t>(fs.f.code.size()), ops[0][0]);
    } else if (op == "ret") {
        if (!ops.empty()) throw LoadError(in.line, "ret takes no operands");
    } else if (op == "call") {
        call(fs, ops, in);
    } else if (MemoryOp mo = memory_op(op); mo.kind) {
        memory(fs, ops, mo, in);
    } else {
        alu(fs, op, ops, in);
    }
    fs.f.code.push_back(in);
}

}  // namespace fake::ptx
