#include "fleet/drain.hpp"

#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "fleet/child_process.hpp"

namespace gpuvet {

bool SlurmNodeState::drained() const {
    return state.find("drain") != std::string::npos || state.find("DRAIN") != std::string::npos;
}

bool SlurmNodeState::ours() const { return reason.rfind(kDrainPrefix, 0) == 0; }

std::string drain_reason(const std::string& what_failed) {
    std::string r = std::string(kDrainPrefix) + " " + what_failed;
    for (char& c : r)
        if (c == '\n' || c == '\r' || c == '\t' || static_cast<unsigned char>(c) < 0x20) c = ' ';
    if (r.size() > kDrainReasonMaxChars) r = r.substr(0, kDrainReasonMaxChars - 3) + "...";
    return r;
}

NodeAction plan_drain(const SlurmNodeState& s, const std::string& reason) {
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
    a.argv = {"scontrol", "update", "NodeName=" + s.node, "State=DRAIN", "Reason=" + reason};
    a.note = "drain: " + reason;
    return a;
}

NodeAction plan_resume(const SlurmNodeState& s) {
    NodeAction a{s.node, {}, {}};
    if (!s.drained()) return a;
    if (!s.ours()) {
        a.note = "not resumed: drained by someone else (" + s.reason + ")";
        return a;
    }
    a.argv = {"scontrol", "update", "NodeName=" + s.node, "State=RESUME"};
    a.note = "resume: it passes now (was: " + s.reason + ")";
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

std::vector<SlurmNodeState> query_node_states(const std::vector<std::string>& nodes, const std::string& sinfo) {
    std::string list;
    for (auto& n : nodes) list += (list.empty() ? "" : ",") + n;
    CommandResult r = run_command({sinfo, "-h", "-N", "-n", list, "-o", "%N|%T|%E"}, 60);
    if (r.status != 0)
        throw runtime_error("sinfo could not read the nodes' states: " + trim(r.err),
                            "run where Slurm's commands reach slurmctld (SLURM_CONF)");
    return parse_node_states(r.out);
}

std::string apply_action(const NodeAction& a) {
    if (a.argv.empty()) return {};
    CommandResult r = run_command(a.argv, 60);
    return r.status == 0 ? std::string() : "scontrol exited " + std::to_string(r.status) + ": " + trim(r.err);
}

}  // namespace gpuvet
