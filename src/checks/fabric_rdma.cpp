#include "checks/fabric_rdma.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace gpuvet::fabric_rdma {

namespace {

// Names, GIDs and speeds travel as they are: no field may hold the separators.
bool plain(std::string_view s) {
    return s.size() <= 256 && std::all_of(s.begin(), s.end(), [](char c) {
               return c > ' ' && c < 127 && c != ';' && c != '=' && c != '%';
           });
}

// A reason may hold any printable text: '%', ';' and '=' are written as %XX.
std::string escape(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        if (c < ' ' || c >= 127 || c == '%' || c == ';' || c == '=') {
            char b[4];
            std::snprintf(b, sizeof b, "%%%02X", c);
            out += b;
        } else {
            out += char(c);
        }
    }
    return out;
}

std::optional<std::string> unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        unsigned v = 0;
        if (i + 2 >= s.size() + 0 || std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3)
            return std::nullopt;
        out += char(v);
        i += 2;
    }
    return out;
}

template <class T>
bool number(std::string_view s, T& out) {
    if (s.empty() || s.size() > 20) return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string gbps_text(double v) { return format_fixed(v, v < 10 ? 2 : 1) + " GB/s"; }

}  // namespace

std::string to_text(const QpInfo& q) {
    std::string s = "node=" + escape(q.node) + ";nic=" + escape(q.nic) + ";lid=" + std::to_string(q.lid) +
                    ";gid=" + q.gid_hex + ";qpn=" + std::to_string(q.qpn) + ";psn=" + std::to_string(q.psn) +
                    ";rkey=" + std::to_string(q.rkey) + ";addr=" + std::to_string(q.addr) +
                    ";bytes=" + std::to_string(q.bytes) + ";speed=" + escape(q.speed);
    if (q.rate_gbitps) {
        char b[64];
        auto r = std::to_chars(b, b + sizeof b, *q.rate_gbitps);  // the shortest text that reads back exactly
        s += ";rate=" + std::string(b, r.ptr);
    }
    if (!q.skipped.empty()) s += ";skipped=" + escape(q.skipped);
    return s;
}

std::optional<QpInfo> parse_qp_info(std::string_view text) {
    if (text.size() > 8192) return std::nullopt;
    QpInfo q;
    std::set<std::string> seen;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find(';'), text.size());
        std::string_view field = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        const std::size_t eq = field.find('=');
        if (eq == std::string_view::npos) return std::nullopt;
        const std::string key(field.substr(0, eq));
        const std::string_view value = field.substr(eq + 1);
        if (!seen.insert(key).second) return std::nullopt;  // a field twice: not ours
        bool ok = true;
        if (key == "node" || key == "nic" || key == "speed" || key == "skipped") {
            auto v = unescape(value);
            if (!v || (key != "skipped" && !v->empty() && !plain(*v))) return std::nullopt;
            (key == "node" ? q.node : key == "nic" ? q.nic : key == "speed" ? q.speed : q.skipped) = *v;
        } else if (key == "lid") {
            ok = number(value, q.lid);
        } else if (key == "gid") {
            ok = (value.empty() || value.size() == 32) &&
                 std::all_of(value.begin(), value.end(), [](char c) { return std::isxdigit((unsigned char)c); });
            q.gid_hex = value;
        } else if (key == "qpn") {
            ok = number(value, q.qpn) && q.qpn < (1u << 24);  // a QPN has 24 bits
        } else if (key == "psn") {
            ok = number(value, q.psn) && q.psn < (1u << 24);
        } else if (key == "rkey") {
            ok = number(value, q.rkey);
        } else if (key == "addr") {
            ok = number(value, q.addr);
        } else if (key == "bytes") {
            ok = number(value, q.bytes);
        } else if (key == "rate") {
            double r = 0;
            ok = number(value, r) && std::isfinite(r) && r >= 1e-3 && r < 1e6;
            q.rate_gbitps = r;
        }  // an unknown key: a later gpuvet's, ignored
        if (!ok) return std::nullopt;
    }
    if (!seen.count("node") || !seen.count("nic") || !seen.count("qpn")) return std::nullopt;
    if (q.skipped.empty() && (q.node.empty() || q.nic.empty())) return std::nullopt;
    return q;
}

nlohmann::ordered_json to_json(const RdmaLink& l) {
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(); };
    return {{"rail", l.rail},
            {"from_node", l.from_node},
            {"from_nic", l.from_nic},
            {"to_node", l.to_node},
            {"to_nic", l.to_nic},
            {"from_gbitps", opt(l.from_gbitps)},
            {"to_gbitps", opt(l.to_gbitps)},
            {"from_speed", l.from_speed},
            {"to_speed", l.to_speed},
            {"memory", l.memory},
            {"memory_why", l.memory_why},
            {"message_bytes", l.message_bytes},
            {"bytes_written", l.bytes_written},
            {"seconds", l.seconds},
            {"gbps", opt(l.gbps)},
            {"verified_bytes", l.verified_bytes},
            {"wrong_bytes", l.wrong_bytes},
            {"error", l.error},
            {"skipped", l.skipped}};
}

namespace {

template <class T>
T get(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key)) throw input_error(std::string("RDMA link lacks \"") + key + "\"", "");
    try {
        return j.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw input_error(std::string("RDMA link's \"") + key + "\" has the wrong type", "");
    }
}

std::optional<double> get_opt(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
    return get<double>(j, key);
}

}  // namespace

RdmaLink rdma_link_from_json(const nlohmann::json& j) {
    RdmaLink l;
    l.rail = get<int>(j, "rail");
    l.from_node = get<std::string>(j, "from_node");
    l.from_nic = get<std::string>(j, "from_nic");
    l.to_node = get<std::string>(j, "to_node");
    l.to_nic = get<std::string>(j, "to_nic");
    l.from_gbitps = get_opt(j, "from_gbitps");
    l.to_gbitps = get_opt(j, "to_gbitps");
    l.from_speed = get<std::string>(j, "from_speed");
    l.to_speed = get<std::string>(j, "to_speed");
    l.memory = get<std::string>(j, "memory");
    l.memory_why = get<std::string>(j, "memory_why");
    l.message_bytes = get<std::uint64_t>(j, "message_bytes");
    l.bytes_written = get<std::uint64_t>(j, "bytes_written");
    l.seconds = get<double>(j, "seconds");
    l.gbps = get_opt(j, "gbps");
    l.verified_bytes = get<std::uint64_t>(j, "verified_bytes");
    l.wrong_bytes = get<std::uint64_t>(j, "wrong_bytes");
    l.error = get<std::string>(j, "error");
    l.skipped = get<std::string>(j, "skipped");
    if (l.rail < 0 || (l.gbps && !(std::isfinite(*l.gbps) && *l.gbps >= 0)))
        throw input_error("RDMA link's rail or figure is out of range", "");
    return l;
}

double data_rate_gbitps(double rate_gbitps, const std::string& speed) {
    if (speed == "SDR" || speed == "DDR" || speed == "QDR") return rate_gbitps * 0.8;
    if (speed == "FDR") return rate_gbitps * 64.0 / 66.0;
    return rate_gbitps;  // FDR10, EDR, HDR, NDR, XDR and Ethernet: the data rate itself
}

namespace {

std::string end_name(const std::string& node, const std::string& nic) { return nic + " on " + node; }

std::string link_name(const RdmaLink& l) {
    return end_name(l.from_node, l.from_nic) + " -> " + end_name(l.to_node, l.to_nic);
}

std::optional<double> expected_gbps(const RdmaLink& l) {
    if (!l.from_gbitps || !l.to_gbitps) return std::nullopt;
    return std::min(data_rate_gbitps(*l.from_gbitps, l.from_speed), data_rate_gbitps(*l.to_gbitps, l.to_speed)) / 8;
}

std::string key_of(const RdmaLink& l) {
    return "rdma_rail" + std::to_string(l.rail) + "_" + l.from_node + "_to_" + l.to_node + "_gbps";
}

}  // namespace

Judged judge_links(const std::vector<RdmaLink>& links) {
    Judged j;
    // Per rail: the links that failed or were slow, and what each one's trouble was.
    std::map<int, std::vector<std::pair<const RdmaLink*, std::string>>> bad;
    std::map<int, int> tried;
    for (const RdmaLink& l : links) {
        if (!l.skipped.empty()) {
            j.notes.push_back("RDMA write " + link_name(l) + " not measured: " + l.skipped);
            continue;
        }
        ++tried[l.rail];
        const std::string key = key_of(l);
        const std::string label = "RDMA write, rail " + std::to_string(l.rail) + ", " + link_name(l);
        if (!l.error.empty()) {
            j.measurements.push_back(Measurement::absent(key, label, "GB/s", l.error));
            bad[l.rail].push_back({&l, "could not run: " + l.error});
            continue;
        }
        if (!l.gbps) {
            j.measurements.push_back(Measurement::absent(key, label, "GB/s", "no figure in the rank's report"));
            continue;
        }
        Measurement m = Measurement::number(key, label, *l.gbps, "GB/s");
        const std::optional<double> want = expected_gbps(l);
        if (want) {
            Reference r;
            r.spec = *want;
            r.expected_fraction = kPassFraction;
            r.fail_below = *want * kPassFraction;
            r.source = std::string("the ports' data rate (") + format_number(*want * 8, 4) + " Gbit/s); " + kPassSource;
            m.against(r);
        } else {
            j.notes.push_back("RDMA write " + link_name(l) + ": a port's rate is unreadable, the figure is not judged");
        }
        j.measurements.push_back(m);
        if (l.wrong_bytes > 0)
            bad[l.rail].push_back({&l, std::to_string(l.wrong_bytes) + " of " + std::to_string(l.verified_bytes) +
                                           " bytes checked arrived wrong (a NIC, cable or PCIe path corrupts data)"});
        else if (want && *l.gbps < *want * kPassFraction)
            bad[l.rail].push_back({&l, gbps_text(*l.gbps) + ", " + format_fixed(100 * *l.gbps / *want, 0) +
                                           "% of the ports' " + gbps_text(*want) +
                                           " data rate (pass: " + format_fixed(100 * kPassFraction, 0) + "%)"});
    }
    if (tried.empty()) return j;
    j.verdict = bad.empty() ? Verdict::Pass : Verdict::Fail;
    for (const auto& [rail, list] : bad) {
        // The NIC at fault is the end common to every bad link of the rail; with two bad links or
        // more sharing one end (a ring over three nodes or more), that end is named alone.
        std::map<std::pair<std::string, std::string>, int> count;
        for (const auto& [l, why] : list) ++count[{l->from_node, l->from_nic}], ++count[{l->to_node, l->to_nic}];
        std::vector<std::pair<std::string, std::string>> common;
        for (const auto& [end, n] : count)
            if (n == int(list.size())) common.push_back(end);
        std::string each;
        for (const auto& [l, why] : list) each += (each.empty() ? "" : "; ") + link_name(*l) + ": " + why;
        if (common.size() == 1 && list.size() >= 2) {
            const auto& [node, nic] = common.front();
            const std::string text = "rail " + std::to_string(rail) + ": " + end_name(node, nic) +
                                     " is the slow or failing NIC: every bad link of the rail has it (" + each +
                                     "); check its cable and port (ibstat, the port's error counters) and reseat or "
                                     "replace it";
            j.findings.push_back({Verdict::Fail, text});
            j.blamed.push_back({node, text});
        } else {
            std::string ends;
            if (common.size() == 2 && list.size() >= 1)
                ends = " (" + end_name(common[0].first, common[0].second) + " or " +
                       end_name(common[1].first, common[1].second) +
                       ": with two nodes the end at fault is not known; a third node tells)";
            j.findings.push_back({Verdict::Fail, "rail " + std::to_string(rail) + ": RDMA write " + each + ends});
        }
    }
    return j;
}

}  // namespace gpuvet::fabric_rdma
