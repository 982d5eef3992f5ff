// Module structure: directives, .entry/.func headers and their .param lists, register and
// block-scoped .param declarations, labels. Instructions go to decode() (ptx_decode.cpp).
#include "ptx_parse.hpp"

#include "ptx_ops.hpp"

namespace fake::ptx {

namespace {

uint32_t type_bytes(const Token& t) {
    static const std::map<std::string, uint32_t> sizes = {
        {".b8", 1},  {".u8", 1},  {".s8", 1},  {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2}, {".b32", 4},
        {".u32", 4}, {".s32", 4}, {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".pred", 1}};
    auto it = sizes.find(t.text);
    if (it == sizes.end()) throw LoadError(t.line, "unsupported type '" + t.text + "'");
    return it->second;
}

uint32_t aligned(uint32_t off, uint32_t a) { return (off + a - 1) / a * a; }

class Parser {
public:
    explicit Parser(std::vector<Token> t) : toks_(std::move(t)) {}
    Module run();

private:
    std::vector<Token> toks_;
    size_t i_ = 0;
    Module m_;

    bool at_end() const { return i_ >= toks_.size(); }
    const Token& peek() const {
        if (at_end()) throw LoadError(toks_.empty() ? 1 : toks_.back().line, "unexpected end of the PTX text");
        return toks_[i_];
    }
    const Token& next() {
        const Token& t = peek();
        ++i_;
        return t;
    }
    bool accept(const char* s) { return !at_end() && toks_[i_].text == s && (++i_, true); }
    void expect(const char* s) {
        if (!accept(s)) throw LoadError(peek().line, std::string("expected '") + s + "', found '" + peek().text + "'");
    }
    void directive();
    Param param_decl(uint32_t& bytes);
    std::vector<Param> param_list(uint32_t& bytes);
    void function(bool entry);
    void body(FunctionScope& fs);
    void statement(FunctionScope& fs);
    void reg_decl(FunctionScope& fs);
};

Module Parser::run() {
    bool version = false;
    while (!at_end()) {
        const Token& t = peek();
        if (t.text == ".version") version = true;
        directive();
    }
    if (!version) throw LoadError(1, "no .version directive");
    return std::move(m_);
}

void Parser::directive() {
    const Token t = next();
    if (t.text == ".version") {
        next();
    } else if (t.text == ".target") {
        next();
        while (accept(",")) next();
    } else if (t.text == ".address_size") {
        if (next().text != "64") throw LoadError(t.line, "only .address_size 64 is supported");
    } else if (t.text == ".visible" || t.text == ".weak") {
        // linkage only
    } else if (t.text == ".entry" || t.text == ".func") {
        function(t.text == ".entry");
    } else {
        throw LoadError(t.line, "unsupported directive '" + t.text + "'");
    }
}

Param Parser::param_decl(uint32_t& bytes) {
    const Token& kw = next();
    if (kw.text != ".param") throw LoadError(kw.line, "expected .param, found '" + kw.text + "'");
    if (peek().text == ".align" || peek().text == ".ptr")
        throw LoadError(peek().line, "unsupported .param qualifier '" + peek().text + "'");
    Param p;
    p.bytes = type_bytes(next());
    p.name = next().text;
    if (peek().text == "[") throw LoadError(peek().line, "array parameters are not supported");
    p.offset = aligned(bytes, p.bytes);
    bytes = p.offset + p.bytes;
    return p;
}

std::vector<Param> Parser::param_list(uint32_t& bytes) {
    std::vector<Param> out;
    expect("(");
    if (accept(")")) return out;
    do out.push_back(param_decl(bytes));
    while (accept(","));
    expect(")");
    return out;
}

void Parser::function(bool entry) {
    Function f;
    f.entry = entry;
    if (!entry && peek().text == "(") f.rets = param_list(f.param_bytes);
    const Token& name = next();
    f.name = name.text;
    if (m_.by_name.count(f.name)) throw LoadError(name.line, "function '" + f.name + "' defined twice");
    if (peek().text == "(") f.params = param_list(f.param_bytes);
    if (peek().text != "{") throw LoadError(peek().line, "unsupported function directive '" + peek().text + "'");
    m_.functions.push_back(std::move(f));
    FunctionScope fs{m_, m_.functions.back(), {}, {{}}, {}};
    for (const Param& p : fs.f.rets) fs.params[0][p.name] = p;
    for (const Param& p : fs.f.params) fs.params[0][p.name] = p;
    body(fs);
    m_.by_name[fs.f.name] = static_cast<uint32_t>(m_.functions.size() - 1);
}

void Parser::body(FunctionScope& fs) {
    expect("{");
    std::map<std::string, uint32_t> labels;
    int depth = 1;
    while (depth > 0) {
        const Token& t = peek();
        if (t.text == "{") {
            ++i_, ++depth;
            fs.params.emplace_back();
        } else if (t.text == "}") {
            ++i_, --depth;
            if (depth > 0) fs.params.pop_back();
        } else if (i_ + 1 < toks_.size() && toks_[i_ + 1].text == ":") {
            if (!labels.emplace(t.text, static_cast<uint32_t>(fs.f.code.size())).second)
                throw LoadError(t.line, "label '" + t.text + "' defined twice");
            i_ += 2;
        } else {
            statement(fs);
        }
    }
    for (auto& [at, label] : fs.branches) {
        auto it = labels.find(label.text);
        if (it == labels.end()) throw LoadError(label.line, "branch to unknown label '" + label.text + "'");
        fs.f.code[at].target = it->second;
    }
    // Falling off the end returns, as ptxas treats a missing final ret.
    Instr r;
    r.run = op_ret;
    fs.f.code.push_back(r);
}

void Parser::reg_decl(FunctionScope& fs) {
    const Token& ty = next();
    type_bytes(ty);
    do {
        const Token& name = next();
        if (accept("<")) {
            const Token& n = next();
            expect(">");
            for (int k = 0; k < std::stoi(n.text); ++k) fs.regs[name.text + std::to_string(k)] = fs.f.regs++;
        } else {
            fs.regs[name.text] = fs.f.regs++;
        }
    } while (accept(","));
    expect(";");
}

void Parser::statement(FunctionScope& fs) {
    const Token t = next();
    if (t.text == ".reg") return reg_decl(fs);
    if (t.text == ".param") {
        --i_;
        Param p = param_decl(fs.f.param_bytes);
        expect(";");
        fs.params.back()[p.name] = p;
        return;
    }
    std::string guard;
    bool neg = false;
    Token op = t;
    if (t.text == "@") {
        neg = accept("!");
        guard = next().text;
        op = next();
    }
    if (op.text[0] == '.') throw LoadError(op.line, "unsupported directive '" + op.text + "'");
    Operands ops;
    int nest = 0;
    while (peek().text != ";" || nest > 0) {
        const Token& x = next();
        if (x.text == "[" || x.text == "{" || x.text == "(") ++nest;
        if (x.text == "]" || x.text == "}" || x.text == ")") --nest;
        if (x.text == "," && nest == 0) {
            ops.emplace_back();
            continue;
        }
        if (ops.empty()) ops.emplace_back();
        ops.back().push_back(x);
    }
    expect(";");
    decode(fs, op, guard, neg, ops);
}

}  // namespace

Module parse(const std::string& text) { return Parser(lex(text)).run(); }

}  // namespace fake::ptx
