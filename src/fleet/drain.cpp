#include "fleet/drain.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "fleet/child_process.hpp"

namespace gpuvet {

bool SlurmNodeState::drained() const {
    return state.find("drain") != std::string::npos || state.find("DRAIN") != std::string::npos;
}

bool SlurmNodeState::ours() const { return reason.rfind(kDrainPrefix, 0) == 0; }

namespace {

constexpr const char* kCausesHead = " (checks: ";
// No cause, or more than fit: recorded as this, which no run clears (an operator resumes the node).
constexpr const char* kUnlisted = "unlisted";

std::string one_line(std::string s) {
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return s;
}

bool looks_like_key(const std::string& w) {
    auto dot = w.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == w.size()) return false;
    for (char c : w)
        if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
              c == '_'))
            return false;
    return true;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (auto& x : v) {
        if (!out.empty()) out += ", ";
        out += x;
    }
    return out;
}

}  // namespace

std::string drain_reason(const std::string& what_failed, const std::vector<std::string>& causes) {
    std::string list;
    for (auto& c : causes) {
        if (!list.empty()) list += ',';
        list += one_line(c);
    }
    if (list.empty() || list.size() > kDrainReasonMaxChars / 2) list = kUnlisted;
    std::string tail = kCausesHead + list + ")";
    std::string text = std::string(kDrainPrefix) + " " + trim(one_line(what_failed));
    std::size_t room = kDrainReasonMaxChars - tail.size();
    if (text.size() > room) text = text.substr(0, room - 3) + "...";
    return text + tail;
}

std::vector<std::string> drain_causes(const std::string& reason) {
    auto at = reason.rfind(kCausesHead);
    if (at != std::string::npos && !reason.empty() && reason.back() == ')') {
        std::string list = reason.substr(at + std::string(kCausesHead).size());
        list.pop_back();
        std::vector<std::string> out;
        for (auto& c : split(list, ','))
            if (!trim(c).empty()) out.push_back(trim(c));
        if (out.size() == 1 && out[0] == kUnlisted) out.clear();
        return out;
    }
    std::string rest = trim(reason.substr(std::min(reason.size(), std::string(kDrainPrefix).size())));
    std::string first = rest.substr(0, rest.find(' '));
    if (reason.rfind(kDrainPrefix, 0) == 0 && looks_like_key(first)) return {first};
    return {};
}

NodeAction plan_drain(const SlurmNodeState& s, const std::string& what_failed, const std::vector<std::string>& causes,
                      const std::vector<std::string>& cleared) {
    NodeAction a{s.node, {}, {}};
    if (s.drained() && !s.ours()) {
        a.note =
            "left alone: drained by someone else (" + (s.reason.empty() ? std::string("no reason") : s.reason) + ")";
        return a;
    }
    if (s.state.find("down") != std::string::npos) {
        a.note = "left alone: Slurm has it down (" + s.reason + ")";
        return a;
    }
    std::vector<std::string> all = causes;
    if (s.drained() && s.ours())  // what it was drained for before and this run has not seen pass
        for (auto& c : drain_causes(s.reason))
            if (!contains(cleared, c) && !contains(all, c)) all.push_back(c);
    std::string reason = drain_reason(what_failed, all);
    a.argv = {"scontrol", "update", "NodeName=" + s.node, "State=DRAIN", "Reason=" + reason};
    a.note = "drain: " + reason;
    return a;
}

NodeAction plan_resume(const SlurmNodeState& s, const std::vector<std::string>& cleared) {
    NodeAction a{s.node, {}, {}};
    if (!s.drained()) return a;
    if (!s.ours()) {
        a.note = "not resumed: drained by someone else (" + s.reason + ")";
        return a;
    }
    std::vector<std::string> open;
    std::vector<std::string> causes = drain_causes(s.reason);
    for (auto& c : causes)
        if (!contains(cleared, c)) open.push_back(c);
    if (causes.empty()) {
        a.note = "not resumed: its reason does not say which checks drained it (" + s.reason +
                 "); resume it by hand once they pass";
        return a;
    }
    if (!open.empty()) {
        a.note = "not resumed: drained for " + joined(open) + ", which this run did not check (" + s.reason + ")";
        return a;
    }
    a.argv = {"scontrol", "update", "NodeName=" + s.node, "State=RESUME"};
    a.note = "resume: " + joined(causes) + " pass now (was: " + s.reason + ")";
    return a;
}

std::vector<SlurmNodeState> parse_node_states(const std::string& text) {
    std::vector<SlurmNodeState> out;
    std::set<std::string> seen;
    for (auto& line : split(text, '\n')) {
        auto a = line.find('|');
        auto b = a == std::string::npos ? a : line.find('|', a + 1);
        if (b == std::string::npos) continue;
        SlurmNodeState s{trim(line.substr(0, a)), trim(line.substr(a + 1, b - a - 1)), trim(line.substr(b + 1))};
        if (s.reason == "none" || s.reason == "(null)") s.reason.clear();
        if (!s.node.empty() && seen.insert(s.node).second) out.push_back(std::move(s));
    }
    return out;
}

std::vector<SlurmNodeState> query_node_states(const std::vector<std::string>& nodes, double timeout_s) {
    std::string list;
    for (auto& n : nodes) list += (list.empty() ? "" : ",") + n;
    CommandResult r = run_command({"sinfo", "-h", "-N", "-n", list, "-o", "%N|%T|%E"}, timeout_s);
    if (r.status != 0)
        throw runtime_error("sinfo could not read the nodes' states: " + trim(r.err),
                            "run where Slurm's commands reach slurmctld (SLURM_CONF)");
    return parse_node_states(r.out);
}

std::string apply_action(const NodeAction& a, double timeout_s) {
    if (a.argv.empty()) return {};
    CommandResult r = run_command(a.argv, timeout_s);
    return r.status == 0 ? std::string() : "scontrol exited " + std::to_string(r.status) + ": " + trim(r.err);
}

}  // namespace gpuvet
