#include "report/result_groups.hpp"

#include <cctype>

namespace gpuvet {

namespace {

// `text` with each mention `word` `self` ("GPU 3", not "GPU 31") replaced by `with`.
std::string replace_self(const std::string& text, const std::string& word, int self, const std::string& with) {
    const std::string token = word + std::to_string(self);
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + 1)) {
        std::size_t end = at + token.size();
        bool whole = (end == text.size() || !std::isdigit(static_cast<unsigned char>(text[end]))) &&
                     (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1])));
        if (!whole) continue;
        out += text.substr(from, at - from) + with;
        from = end;
    }
    return out + text.substr(from);
}

// The result's texts with its GPU's mentions of itself ("GPU 3", and the driver's "CUDA device 3:")
// replaced: by `with` ("each GPU"), and "device 3" by "device of " + `with`.
CheckResult rewritten(const CheckResult& c, const std::string& with, bool sentence_start) {
    if (!c.gpu) return c;
    CheckResult out = c;
    auto fix = [&](std::string& t) {
        t = replace_self(replace_self(t, "GPU ", *c.gpu, with), "device ", *c.gpu, "device of " + with);
        if (sentence_start && t.rfind(with, 0) == 0 && !t.empty())
            t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
    };
    fix(out.summary);
    for (auto& f : out.findings) fix(f.text);
    for (auto& d : out.details) fix(d);
    for (auto& m : out.measurements)
        if (m.text) fix(*m.text);
    return out;
}

}  // namespace

bool same_result(const CheckResult& a, const CheckResult& b) {
    if (a.key != b.key || a.verdict != b.verdict || a.gpu.has_value() != b.gpu.has_value() ||
        a.findings.size() != b.findings.size() || a.measurements.size() != b.measurements.size() ||
        a.details.size() != b.details.size())
        return false;
    const CheckResult x = rewritten(a, "GPU #", false), y = rewritten(b, "GPU #", false);
    if (x.summary != y.summary || x.details != y.details) return false;
    for (std::size_t i = 0; i < x.findings.size(); ++i)
        if (x.findings[i].verdict != y.findings[i].verdict || x.findings[i].text != y.findings[i].text) return false;
    for (std::size_t i = 0; i < x.measurements.size(); ++i)
        if (x.measurements[i].key != y.measurements[i].key || x.measurements[i].value != y.measurements[i].value ||
            x.measurements[i].text != y.measurements[i].text)
            return false;
    return true;
}

std::vector<ResultGroup> group_results(const std::vector<const CheckResult*>& results) {
    std::vector<ResultGroup> out;
    std::vector<bool> done(results.size(), false);
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (done[i]) continue;
        const CheckResult& c = *results[i];
        std::vector<int> gpus;
        if (c.gpu) {
            gpus.push_back(*c.gpu);
            for (std::size_t k = i + 1; k < results.size(); ++k)
                if (!done[k] && results[k]->gpu && same_result(c, *results[k])) {
                    gpus.push_back(*results[k]->gpu);
                    done[k] = true;
                }
        }
        out.push_back({gpus.size() > 1 ? rewritten(c, "each GPU", true) : c, std::move(gpus)});
    }
    return out;
}

bool repeats_summary(const CheckResult& c, const std::string& line) {
    return !line.empty() && c.summary.find(line) != std::string::npos;
}

std::vector<const Finding*> findings_beyond_summary(const CheckResult& c) {
    std::vector<const Finding*> out;
    for (const Finding& f : c.findings)
        if (!repeats_summary(c, f.text)) out.push_back(&f);
    return out;
}

std::string gpu_ranges(const std::vector<int>& gpus) {
    std::string out;
    for (std::size_t i = 0; i < gpus.size();) {
        std::size_t j = i;
        while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
        out += (out.empty() ? "" : ", ") + std::to_string(gpus[i]);
        if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(gpus[j]);
        i = j + 1;
    }
    return out;
}

std::string gpus_label(const std::vector<int>& gpus) {
    return (gpus.size() == 1 ? "GPU " : "GPUs ") + gpu_ranges(gpus);
}

}  // namespace gpuvet
