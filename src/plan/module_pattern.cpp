#include "plan/module_pattern.hpp"

#include <stdexcept>

namespace gpuvet {

namespace {

// Limits no real config comes near; they keep a hostile pattern's program small.
constexpr std::size_t kMaxPatternChars = 512;
constexpr int kMaxDepth = 32;
constexpr int kMaxRepeat = 64;
constexpr std::size_t kMaxInstructions = 8192;

using CharSet = std::bitset<256>;

struct Node {
    enum Kind { Empty, Chars, Cat, Alt, Repeat, Begin, End } kind = Empty;
    int set = -1;  // Chars: index into the class table
    std::vector<Node> kids;
    int min = 0, max = -1;  // Repeat; max -1: unbounded
};

CharSet range_set(unsigned char lo, unsigned char hi) {
    CharSet s;
    for (unsigned c = lo; c <= hi; ++c) s.set(c);
    return s;
}
CharSet digit_set() { return range_set('0', '9'); }
CharSet word_set() { return range_set('a', 'z') | range_set('A', 'Z') | digit_set() | range_set('_', '_'); }
CharSet space_set() {
    CharSet s;
    for (char c : {' ', '\t', '\n', '\r', '\f', '\v'}) s.set((unsigned char)c);
    return s;
}

class Parser {
public:
    Parser(std::string_view p, std::vector<CharSet>& sets) : p_(p), sets_(sets) {}

    Node parse() {
        Node n = alternation(0);
        if (i_ < p_.size()) fail("unbalanced ')'");
        return n;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::invalid_argument(why + " at character " + std::to_string(i_ + 1));
    }
    bool more() const { return i_ < p_.size(); }
    char peek() const { return p_[i_]; }

    Node chars(const CharSet& s) {
        sets_.push_back(s);
        Node n;
        n.kind = Node::Chars;
        n.set = int(sets_.size()) - 1;
        return n;
    }

    Node alternation(int depth) {
        if (depth > kMaxDepth) fail("groups nested too deep");
        Node first = concatenation(depth);
        if (!more() || peek() != '|') return first;
        Node alt;
        alt.kind = Node::Alt;
        alt.kids.push_back(std::move(first));
        while (more() && peek() == '|') {
            ++i_;
            alt.kids.push_back(concatenation(depth));
        }
        return alt;
    }

    Node concatenation(int depth) {
        Node cat;
        cat.kind = Node::Cat;
        while (more() && peek() != '|' && peek() != ')') cat.kids.push_back(repetition(depth));
        return cat;
    }

    // {m}, {m,}, {m,n} or {,n}; anything else after '{' is a literal brace, as in Python.
    bool counted(int& lo, int& hi) {
        std::size_t j = i_ + 1;
        auto number = [&](int& out) {
            std::size_t start = j;
            long v = 0;
            while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
                v = v * 10 + (p_[j] - '0');
                if (v > 100000) v = 100000;
                ++j;
            }
            out = int(v);
            return j > start;
        };
        int a = 0, b = -1;
        bool has_a = number(a);
        if (j < p_.size() && p_[j] == '}') {
            if (!has_a) return false;
            b = a;
        } else if (j < p_.size() && p_[j] == ',') {
            ++j;
            if (!has_a) a = 0;
            int c = 0;
            if (number(c)) b = c;
            if (j >= p_.size() || p_[j] != '}') return false;
        } else {
            return false;
        }
        i_ = j + 1;
        if (b >= 0 && b < a) fail("a repeat count whose minimum is above its maximum");
        if (a > kMaxRepeat || b > kMaxRepeat) fail("a repeat count above " + std::to_string(kMaxRepeat));
        lo = a;
        hi = b;
        return true;
    }

    Node repetition(int depth) {
        Node atom_node = atom(depth);
        if (!more()) return atom_node;
        int lo = 0, hi = -1;
        char c = peek();
        if (c == '*' || c == '+' || c == '?') {
            ++i_;
            lo = c == '+' ? 1 : 0;
            hi = c == '?' ? 1 : -1;
        } else if (c != '{' || !counted(lo, hi)) {
            return atom_node;
        }
        if (atom_node.kind == Node::Begin || atom_node.kind == Node::End) fail("nothing to repeat");
        if (more() && peek() == '?') ++i_;  // lazy: the same set of names matches
        if (more() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')) {
            int a = 0, b = 0;
            std::size_t save = i_;
            if (peek() != '{' || counted(a, b)) fail("multiple repeat");
            i_ = save;
        }
        Node r;
        r.kind = Node::Repeat;
        r.min = lo;
        r.max = hi;
        r.kids.push_back(std::move(atom_node));
        return r;
    }

    // The character an escape names, or the class it stands for.
    CharSet escape() {
        if (!more()) fail("a pattern ending in '\\'");
        char c = p_[i_++];
        switch (c) {
            case 'd': return digit_set();
            case 'D': return ~digit_set();
            case 'w': return word_set();
            case 'W': return ~word_set();
            case 's': return space_set();
            case 'S': return ~space_set();
            case 'n': return range_set('\n', '\n');
            case 't': return range_set('\t', '\t');
            case 'r': return range_set('\r', '\r');
            case 'f': return range_set('\f', '\f');
            case 'v': return range_set('\v', '\v');
            default: break;
        }
        if ((c >= '0' && c <= '9') || c == 'b' || c == 'B' || c == 'A' || c == 'Z' || c == 'x' || c == 'u' ||
            c == 'U' || c == 'N' || c == 'g' || c == 'a')
            fail(std::string("the escape \\") + c + " (not supported in module names)");
        return range_set((unsigned char)c, (unsigned char)c);
    }

    CharSet char_class() {
        CharSet s;
        bool negate = more() && peek() == '^';
        if (negate) ++i_;
        bool first = true;
        while (true) {
            if (!more()) fail("an unterminated '['");
            char c = peek();
            if (c == ']' && !first) {
                ++i_;
                break;
            }
            first = false;
            CharSet item;
            unsigned char lo = 0;
            bool single = false;
            ++i_;
            if (c == '\\') {
                item = escape();
                single = item.count() == 1;
                if (single)
                    for (unsigned k = 0; k < 256; ++k)
                        if (item.test(k)) lo = (unsigned char)k;
            } else {
                lo = (unsigned char)c;
                single = true;
                item.set(lo);
            }
            if (single && more() && peek() == '-' && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
                ++i_;
                char d = p_[i_++];
                unsigned char hi = (unsigned char)d;
                if (d == '\\') {
                    CharSet e = escape();
                    if (e.count() != 1) fail("a class range ending in a class");
                    for (unsigned k = 0; k < 256; ++k)
                        if (e.test(k)) hi = (unsigned char)k;
                }
                if (hi < lo) fail("a class range out of order");
                item = range_set(lo, hi);
            }
            s |= item;
        }
        return negate ? ~s : s;
    }

    Node atom(int depth) {
        char c = p_[i_++];
        switch (c) {
            case '(': {
                if (more() && peek() == '?') {
                    if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') i_ += 2;
                    else fail("'(?' groups other than (?:...)");
                }
                Node inner = alternation(depth + 1);
                if (!more() || peek() != ')') fail("an unterminated '('");
                ++i_;
                return inner;
            }
            case '[': return chars(char_class());
            case '.': return chars(~range_set('\n', '\n'));
            case '^': {
                Node n;
                n.kind = Node::Begin;
                return n;
            }
            case '$': {
                Node n;
                n.kind = Node::End;
                return n;
            }
            case '\\': return chars(escape());
            case '*':
            case '+':
            case '?': fail(std::string("nothing to repeat before '") + c + "'");
            default: return chars(range_set((unsigned char)c, (unsigned char)c));
        }
    }

    std::string_view p_;
    std::vector<CharSet>& sets_;
    std::size_t i_ = 0;
};

class Compiler {
public:
    explicit Compiler(std::vector<NamePattern::Inst>& prog) : prog_(prog) {}

    void emit(const Node& n) {
        switch (n.kind) {
            case Node::Empty: return;
            case Node::Chars: push({NamePattern::Inst::Set, n.set, 0}); return;
            case Node::Begin: push({NamePattern::Inst::Begin, 0, 0}); return;
            case Node::End: push({NamePattern::Inst::End, 0, 0}); return;
            case Node::Cat:
                for (auto& k : n.kids) emit(k);
                return;
            case Node::Alt: alternatives(n); return;
            case Node::Repeat: repeat(n); return;
        }
    }

private:
    std::size_t push(NamePattern::Inst i) {
        if (prog_.size() >= kMaxInstructions) throw std::invalid_argument("a pattern too large to match");
        prog_.push_back(i);
        return prog_.size() - 1;
    }
    std::int32_t here() const { return std::int32_t(prog_.size()); }

    void alternatives(const Node& n) {
        std::vector<std::size_t> to_end;
        for (std::size_t k = 0; k + 1 < n.kids.size(); ++k) {
            std::size_t split = push({NamePattern::Inst::Split, 0, 0});
            prog_[split].x = here();
            emit(n.kids[k]);
            to_end.push_back(push({NamePattern::Inst::Jump, 0, 0}));
            prog_[split].y = here();
        }
        emit(n.kids.back());
        for (auto j : to_end) prog_[j].x = here();
    }

    void repeat(const Node& n) {
        const Node& kid = n.kids.front();
        for (int k = 0; k < n.min; ++k) emit(kid);
        if (n.max < 0) {  // the rest any number of times
            std::size_t split = push({NamePattern::Inst::Split, 0, 0});
            prog_[split].x = here();
            emit(kid);
            push({NamePattern::Inst::Jump, std::int32_t(split), 0});
            prog_[split].y = here();
            return;
        }
        std::vector<std::size_t> skips;
        for (int k = n.min; k < n.max; ++k) {
            std::size_t split = push({NamePattern::Inst::Split, 0, 0});
            prog_[split].x = here();
            skips.push_back(split);
            emit(kid);
        }
        for (auto s : skips) prog_[s].y = here();
    }

    std::vector<NamePattern::Inst>& prog_;
};

}  // namespace

NamePattern NamePattern::compile(std::string_view regex) {
    if (regex.size() > kMaxPatternChars)
        throw std::invalid_argument("longer than " + std::to_string(kMaxPatternChars) + " characters");
    NamePattern np;
    Node root = Parser(regex, np.sets_).parse();
    Compiler(np.prog_).emit(root);
    if (np.prog_.size() >= kMaxInstructions) throw std::invalid_argument("a pattern too large to match");
    np.prog_.push_back({Inst::Match, 0, 0});
    return np;
}

bool NamePattern::run(std::string_view s, bool whole) const {
    const std::size_t n = prog_.size();
    std::vector<std::uint32_t> seen(n, 0);
    std::uint32_t gen = 0;
    std::vector<std::int32_t> current, next, stack;
    bool matched = false;
    // Follows the empty moves from `pc` at position `pos`, keeping the instructions that read a character.
    auto add = [&](std::vector<std::int32_t>& list, std::int32_t start, std::size_t pos) {
        stack.clear();
        stack.push_back(start);
        while (!stack.empty()) {
            std::int32_t pc = stack.back();
            stack.pop_back();
            if (seen[pc] == gen) continue;
            seen[pc] = gen;
            const Inst& in = prog_[pc];
            switch (in.op) {
                case Inst::Set: list.push_back(pc); break;
                case Inst::Split:
                    stack.push_back(in.y);
                    stack.push_back(in.x);
                    break;
                case Inst::Jump: stack.push_back(in.x); break;
                case Inst::Begin:
                    if (pos == 0) stack.push_back(pc + 1);
                    break;
                case Inst::End:
                    if (pos == s.size()) stack.push_back(pc + 1);
                    break;
                case Inst::Match:
                    if (!whole || pos == s.size()) matched = true;
                    break;
            }
        }
    };
    ++gen;
    add(current, 0, 0);
    for (std::size_t pos = 0; pos < s.size() && !current.empty(); ++pos) {
        if (matched && !whole) return true;
        ++gen;
        next.clear();
        const unsigned char c = (unsigned char)s[pos];
        for (std::int32_t pc : current)
            if (sets_[prog_[pc].x].test(c)) add(next, pc + 1, pos + 1);
        current.swap(next);
    }
    return matched;
}

bool is_literal_name(std::string_view pattern) {
    for (char c : pattern)
        if (std::string_view("\\^$*+?{}[]()|").find(c) != std::string_view::npos) return false;
    return true;
}

}  // namespace gpuvet
