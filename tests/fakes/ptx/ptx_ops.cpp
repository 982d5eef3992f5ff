// Handlers of the interpreted PTX subset. Registers hold raw bits zero-extended to 64; each
// handler reads its operands at the instruction's type and writes the result the same way.
// Integer arithmetic wraps (unsigned C++ arithmetic); f32/f64 use the host's IEEE round-to-nearest
// without flush-to-zero (x86-64 SSE default), which is what .rn without .ftz specifies.
#include "ptx_ops.hpp"

#include <bit>
#include <cmath>
#include <map>
#include <type_traits>

#include "ptx_float.hpp"

namespace fake::ptx {

namespace {

uint64_t val(const Thread& t, const Operand& o) { return o.is_reg ? t.R[o.reg] : o.imm; }

template <class T>
T as(uint64_t raw) {
    if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(static_cast<uint32_t>(raw));
    else if constexpr (std::is_same_v<T, double>) return std::bit_cast<double>(raw);
    else return static_cast<T>(raw);
}
template <class T>
uint64_t bits(T v) {
    if constexpr (std::is_same_v<T, float>) return std::bit_cast<uint32_t>(v);
    else if constexpr (std::is_same_v<T, double>) return std::bit_cast<uint64_t>(v);
    else return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
}
// Loaded values: signed types sign-extend into the register, as ld.s32 does.
template <class T>
uint64_t widen(T v) {
    if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
    else return bits(v);
}

template <class T, auto F>
uint32_t unary(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = bits<T>(F(as<T>(val(t, in.a))));
    return pc + 1;
}
template <class T, auto F>
uint32_t binary(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = bits<T>(F(as<T>(val(t, in.a)), as<T>(val(t, in.b))));
    return pc + 1;
}
template <class T, auto F>
uint32_t ternary(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = bits<T>(F(as<T>(val(t, in.a)), as<T>(val(t, in.b)), as<T>(val(t, in.c))));
    return pc + 1;
}
// Shifts: the amount is an unsigned 32-bit value; amounts past the width clamp (PTX semantics).
template <class T, bool Left>
uint32_t shift(Thread& t, const Instr& in, uint32_t pc) {
    const uint32_t n = static_cast<uint32_t>(val(t, in.b));
    const T a = as<T>(val(t, in.a));
    constexpr uint32_t w = sizeof(T) * 8;
    T r;
    if constexpr (Left) r = n >= w ? T(0) : static_cast<T>(a << n);
    else if constexpr (std::is_signed_v<T>) r = static_cast<T>(a >> (n >= w ? w - 1 : n));
    else r = n >= w ? T(0) : static_cast<T>(a >> n);
    t.R[in.d.reg] = bits<T>(r);
    return pc + 1;
}
template <class W, class T>
uint32_t mul_wide(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = bits<W>(static_cast<W>(static_cast<W>(as<T>(val(t, in.a))) * static_cast<W>(as<T>(val(t, in.b)))));
    return pc + 1;
}
template <class T, auto F>
uint32_t setp(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = F(as<T>(val(t, in.a)), as<T>(val(t, in.b))) ? 1 : 0;
    return pc + 1;
}
template <class T>
uint32_t selp(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = bits<T>(as<T>(t.R[in.c.reg] ? val(t, in.a) : val(t, in.b)));
    return pc + 1;
}
template <class D, class S>
uint32_t cvt(Thread& t, const Instr& in, uint32_t pc) {
    t.R[in.d.reg] = bits<D>(static_cast<D>(as<S>(val(t, in.a))));
    return pc + 1;
}
uint32_t cvt_f32_f16(Thread& t, const Instr& in, uint32_t pc) {
    // Exact: every f16 value is an f32 value.
    t.R[in.d.reg] = bits<float>(static_cast<float>(half_to_double(static_cast<uint16_t>(val(t, in.a)), kF16)));
    return pc + 1;
}
template <HalfFormat F, bool Packed>
uint32_t fma_half(Thread& t, const Instr& in, uint32_t pc) {
    const uint64_t a = val(t, in.a), b = val(t, in.b), c = val(t, in.c);
    if constexpr (Packed) t.R[in.d.reg] = half2_fma(uint32_t(a), uint32_t(b), uint32_t(c), F);
    else t.R[in.d.reg] = half_fma(uint16_t(a), uint16_t(b), uint16_t(c), F);
    return pc + 1;
}

// ---- memory ---------------------------------------------------------------------------------------
template <class T>
uint32_t ld_param(Thread& t, const Instr& in, uint32_t pc) {
    T v;
    std::memcpy(&v, t.P + in.offset, sizeof v);
    t.R[in.d.reg] = widen(v);
    return pc + 1;
}
template <class T>
uint32_t st_param(Thread& t, const Instr& in, uint32_t pc) {
    const T v = as<T>(val(t, in.b));
    std::memcpy(t.P + in.offset, &v, sizeof v);
    return pc + 1;
}
template <class T, int V>
uint32_t ld_global(Thread& t, const Instr& in, uint32_t pc) {
    unsigned char* h = t.global(t.R[in.a.reg] + static_cast<uint64_t>(in.offset), sizeof(T) * V, in, false);
    if (!h) return kFault;
    for (int k = 0; k < V; ++k) {
        T v;
        std::memcpy(&v, h + k * sizeof(T), sizeof v);
        t.R[V == 1 ? in.d.reg : in.vregs[k]] = widen(v);
    }
    return pc + 1;
}
template <class T, int V>
uint32_t st_global(Thread& t, const Instr& in, uint32_t pc) {
    unsigned char* h = t.global(t.R[in.a.reg] + static_cast<uint64_t>(in.offset), sizeof(T) * V, in, true);
    if (!h) return kFault;
    for (int k = 0; k < V; ++k) {
        const uint64_t raw = V == 1 ? val(t, in.b) : ((in.vis_reg >> k) & 1) ? t.R[in.vregs[k]] : in.vimm[k];
        const T v = as<T>(raw);
        std::memcpy(h + k * sizeof(T), &v, sizeof v);
    }
    return pc + 1;
}
// Threads run one after another, so a read-modify-write is atomic by construction.
template <class T>
uint32_t atom_add(Thread& t, const Instr& in, uint32_t pc) {
    unsigned char* h = t.global(t.R[in.a.reg] + static_cast<uint64_t>(in.offset), sizeof(T), in, true);
    if (!h) return kFault;
    T old;
    std::memcpy(&old, h, sizeof old);
    const T now = static_cast<T>(old + as<T>(val(t, in.b)));
    std::memcpy(h, &now, sizeof now);
    t.R[in.d.reg] = bits<T>(old);
    return pc + 1;
}

using u16 = uint16_t;
using u32 = uint32_t;
using u64 = uint64_t;
using s16 = int16_t;
using s32 = int32_t;
using s64 = int64_t;
using u8 = uint8_t;
using s8 = int8_t;

constexpr auto kAdd = [](auto a, auto b) { return static_cast<decltype(a)>(a + b); };
constexpr auto kSub = [](auto a, auto b) { return static_cast<decltype(a)>(a - b); };
// Integer products in at least `unsigned` so u16 * u16 cannot overflow a promoted int.
template <class T>
using Wide = std::conditional_t<std::is_integral_v<T>, std::common_type_t<T, unsigned>, T>;
constexpr auto kMul = [](auto a, auto b) {
    using W = Wide<decltype(a)>;
    return static_cast<decltype(a)>(W(a) * W(b));
};
constexpr auto kAnd = [](auto a, auto b) { return static_cast<decltype(a)>(a & b); };
constexpr auto kOr = [](auto a, auto b) { return static_cast<decltype(a)>(a | b); };
constexpr auto kXor = [](auto a, auto b) { return static_cast<decltype(a)>(a ^ b); };
constexpr auto kNot = [](auto a) { return static_cast<decltype(a)>(~a); };
constexpr auto kMad = [](auto a, auto b, auto c) {
    using W = Wide<decltype(a)>;
    return static_cast<decltype(a)>(W(a) * W(b) + W(c));
};
constexpr auto kFma = [](auto a, auto b, auto c) { return std::fma(a, b, c); };
constexpr auto kAbsF = [](auto a) { return std::fabs(a); };  // clears the sign bit, NaN stays NaN
constexpr auto kAbsI = [](auto a) {
    return static_cast<decltype(a)>(a < 0 ? 0 - std::make_unsigned_t<decltype(a)>(a) : a);
};
constexpr auto kNeg = [](auto a) { return -a; };  // floats only: flips the sign bit
constexpr auto kNegI = [](auto a) { return static_cast<decltype(a)>(0 - std::make_unsigned_t<decltype(a)>(a)); };
constexpr auto kId = [](auto a) { return a; };
constexpr auto kEq = [](auto a, auto b) { return a == b; };
constexpr auto kNe = [](auto a, auto b) { return a != b; };  // float: ordered, see kNeF
constexpr auto kNeF = [](auto a, auto b) { return a == a && b == b && a != b; };
constexpr auto kLt = [](auto a, auto b) { return a < b; };
constexpr auto kLe = [](auto a, auto b) { return a <= b; };
constexpr auto kGt = [](auto a, auto b) { return a > b; };
constexpr auto kGe = [](auto a, auto b) { return a >= b; };
constexpr auto kNan = [](auto a, auto b) { return a != a || b != b; };
constexpr auto kNum = [](auto a, auto b) { return a == a && b == b; };

// Wrapping arithmetic runs on the unsigned type of the same width (signed overflow is undefined
// in C++, two's complement wrap-around in PTX); comparisons and shifts use the signed type.
template <class T>
void add_int(std::map<std::string, Handler>& m, const std::string& s) {
    using U = std::make_unsigned_t<T>;
    m["add." + s] = binary<U, kAdd>;
    m["sub." + s] = binary<U, kSub>;
    m["mul.lo." + s] = binary<U, kMul>;
    m["mad.lo." + s] = ternary<U, kMad>;
    m["mov." + s] = unary<T, kId>;
    m["selp." + s] = selp<T>;
    m["shr." + s] = shift<T, false>;
    m["setp.eq." + s] = setp<T, kEq>;
    m["setp.ne." + s] = setp<T, kNe>;
    m["setp.lt." + s] = setp<T, kLt>;
    m["setp.le." + s] = setp<T, kLe>;
    m["setp.gt." + s] = setp<T, kGt>;
    m["setp.ge." + s] = setp<T, kGe>;
    if constexpr (std::is_signed_v<T>) {
        m["abs." + s] = unary<T, kAbsI>;
        m["neg." + s] = unary<T, kNegI>;
    }
}
template <class T>
void add_bits(std::map<std::string, Handler>& m, const std::string& s) {
    m["mov." + s] = unary<T, kId>;
    m["and." + s] = binary<T, kAnd>;
    m["or." + s] = binary<T, kOr>;
    m["xor." + s] = binary<T, kXor>;
    m["not." + s] = unary<T, kNot>;
    m["shl." + s] = shift<T, true>;
    m["shr." + s] = shift<T, false>;
    m["selp." + s] = selp<T>;
    m["setp.eq." + s] = setp<T, kEq>;
    m["setp.ne." + s] = setp<T, kNe>;
}
template <class T>
void add_float(std::map<std::string, Handler>& m, const std::string& s) {
    for (const char* r : {"", "rn."}) {
        m[std::string("add.") + r + s] = binary<T, kAdd>;
        m[std::string("sub.") + r + s] = binary<T, kSub>;
        m[std::string("mul.") + r + s] = binary<T, kMul>;
    }
    m["fma.rn." + s] = ternary<T, kFma>;
    m["mov." + s] = unary<T, kId>;
    m["abs." + s] = unary<T, kAbsF>;
    m["neg." + s] = unary<T, kNeg>;
    m["selp." + s] = selp<T>;
    m["setp.eq." + s] = setp<T, kEq>;
    m["setp.ne." + s] = setp<T, kNeF>;
    m["setp.lt." + s] = setp<T, kLt>;
    m["setp.le." + s] = setp<T, kLe>;
    m["setp.gt." + s] = setp<T, kGt>;
    m["setp.ge." + s] = setp<T, kGe>;
    m["setp.nan." + s] = setp<T, kNan>;
    m["setp.num." + s] = setp<T, kNum>;
}
template <class T, class R = T>
void add_memory(std::map<std::string, Handler>& m, const std::string& s) {
    m["ld.param." + s] = ld_param<T>;
    m["st.param." + s] = st_param<T>;
    m["ld.global." + s] = ld_global<T, 1>;
    m["st.global." + s] = st_global<T, 1>;
    if constexpr (sizeof(T) >= 4) {
        m["ld.global.v2." + s] = ld_global<T, 2>;
        m["st.global.v2." + s] = st_global<T, 2>;
    }
    if constexpr (sizeof(T) == 4) {
        m["ld.global.v4." + s] = ld_global<T, 4>;
        m["st.global.v4." + s] = st_global<T, 4>;
    }
}

std::map<std::string, Handler> build_table() {
    std::map<std::string, Handler> m;
    add_int<u16>(m, "u16"), add_int<u32>(m, "u32"), add_int<u64>(m, "u64");
    add_int<s16>(m, "s16"), add_int<s32>(m, "s32"), add_int<s64>(m, "s64");
    add_bits<u16>(m, "b16"), add_bits<u32>(m, "b32"), add_bits<u64>(m, "b64");
    m["and.pred"] = binary<u64, kAnd>, m["or.pred"] = binary<u64, kOr>, m["xor.pred"] = binary<u64, kXor>;
    m["not.pred"] = unary<u64, [](u64 a) { return a ^ 1; }>;
    m["mov.pred"] = unary<u64, kId>;
    add_float<float>(m, "f32"), add_float<double>(m, "f64");
    m["mul.wide.u32"] = mul_wide<u64, u32>, m["mul.wide.s32"] = mul_wide<s64, s32>;
    m["mul.wide.u16"] = mul_wide<u32, u16>, m["mul.wide.s16"] = mul_wide<s32, s16>;
    // Integer conversions (truncate, zero- or sign-extend) and the exact float widenings only:
    // conversions that round need a rounding modifier the subset does not implement.
    m["cvt.u64.u32"] = cvt<u64, u32>, m["cvt.u32.u64"] = cvt<u32, u64>, m["cvt.s64.s32"] = cvt<s64, s32>;
    m["cvt.s32.s64"] = cvt<s32, s64>, m["cvt.u32.u16"] = cvt<u32, u16>, m["cvt.u16.u32"] = cvt<u16, u32>;
    m["cvt.u64.u16"] = cvt<u64, u16>, m["cvt.u64.s32"] = cvt<u64, s32>, m["cvt.s64.u32"] = cvt<s64, u32>;
    m["cvt.f32.f16"] = cvt_f32_f16, m["cvt.f64.f32"] = cvt<double, float>;
    // Generic and global addresses are the same in the fake (no shared or local memory).
    m["cvta.to.global.u64"] = unary<u64, kId>, m["cvta.global.u64"] = unary<u64, kId>;
    m["fma.rn.f16"] = fma_half<kF16, false>, m["fma.rn.f16x2"] = fma_half<kF16, true>;
    m["fma.rn.bf16"] = fma_half<kBF16, false>, m["fma.rn.bf16x2"] = fma_half<kBF16, true>;
    add_memory<u8>(m, "u8"), add_memory<s8>(m, "s8"), add_memory<u8>(m, "b8");
    add_memory<u16>(m, "u16"), add_memory<s16>(m, "s16"), add_memory<u16>(m, "b16");
    add_memory<u32>(m, "u32"), add_memory<s32>(m, "s32"), add_memory<u32>(m, "b32"), add_memory<float>(m, "f32");
    add_memory<u64>(m, "u64"), add_memory<s64>(m, "s64"), add_memory<u64>(m, "b64"), add_memory<double>(m, "f64");
    for (const char* sp : {"atom.global.add.", "atom.add."}) {
        m[std::string(sp) + "u32"] = atom_add<u32>, m[std::string(sp) + "s32"] = atom_add<s32>;
        m[std::string(sp) + "u64"] = atom_add<u64>;
    }
    m["bra"] = op_bra, m["ret"] = op_ret, m["call"] = op_call;
    return m;
}

}  // namespace

Handler find_handler(const std::string& opcode) {
    static const std::map<std::string, Handler> table = build_table();
    auto it = table.find(opcode);
    return it == table.end() ? nullptr : it->second;
}

MemoryOp memory_op(const std::string& op) {
    MemoryOp r;
    if (op.starts_with("ld.")) r.kind = 'l';
    else if (op.starts_with("st.")) r.kind = 's';
    else if (op.starts_with("atom.")) r.kind = 'a';
    else return r;
    r.param = op.find(".param.") != std::string::npos;
    r.vec = op.find(".v4.") != std::string::npos ? 4 : op.find(".v2.") != std::string::npos ? 2 : 1;
    const std::string ty = op.substr(op.rfind('.') + 1);
    r.width = std::stoi(ty.substr(1)) / 8;
    return r;
}

// Every loop branches, so counting branches and calls bounds a kernel that never ends.
uint32_t op_bra(Thread& t, const Instr& in, uint32_t) {
    if (t.budget == 0) return t.fail(Fault::instruction_budget, 0, in), kFault;
    --t.budget;
    return in.target;
}
uint32_t op_ret(Thread&, const Instr&, uint32_t) { return kRet; }

// Pushes the callee's frame: its own registers (specials copied) and .param area, with the
// caller's argument parameters copied in at the callee's declared offsets.
uint32_t op_call(Thread& t, const Instr& in, uint32_t pc) {
    const Call& c = t.frames.back().f->calls[in.target];
    const Function& callee = t.module->functions[c.callee];
    if (t.frames.size() >= 64 || t.budget == 0)
        return t.fail(Fault::instruction_budget, 0, in), kFault;  // runaway recursion
    --t.budget;
    t.frames.back().pc = pc + 1;
    Frame fr;
    fr.f = &callee;
    fr.reg_base = static_cast<uint32_t>(t.regs.size());
    fr.param_base = static_cast<uint32_t>(t.params.size());
    fr.call = in.target;
    const uint32_t caller_regs = t.frames.back().reg_base, caller_params = t.frames.back().param_base;
    t.regs.resize(t.regs.size() + callee.regs, 0);
    t.params.resize(t.params.size() + callee.param_bytes, 0);
    std::memcpy(&t.regs[fr.reg_base], &t.regs[caller_regs], kSpecials * sizeof(uint64_t));
    for (const ParamCopy& p : c.args)
        std::memcpy(&t.params[fr.param_base + p.to], &t.params[caller_params + p.from], p.bytes);
    t.frames.push_back(fr);
    t.rebase();
    return kCall;
}

}  // namespace fake::ptx
