#include "checks/fabric_allreduce_plan.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "gpu/allreduce_plan.hpp"

namespace gpuvet::fabric_allreduce {

using Json = nlohmann::ordered_json;

const char* to_string(CommKind k) {
    switch (k) {
        case CommKind::All: return "all";
        case CommKind::Rail: return "rail";
        case CommKind::Pair: return "pair";
    }
    return "all";
}

std::vector<Comm> plan_comms(int nodes, int per_node) {
    std::vector<Comm> out;
    Comm all{CommKind::All, 0, {}, {}};
    for (int n = 0; n < nodes; ++n) {
        all.nodes.push_back(n);
        for (int l = 0; l < per_node; ++l) all.slots.push_back(slot_of(n, l, per_node));
    }
    out.push_back(all);
    if (nodes < 2) return out;
    for (int l = 0; l < per_node; ++l) {
        Comm rail{CommKind::Rail, l, {}, all.nodes};
        for (int n = 0; n < nodes; ++n) rail.slots.push_back(slot_of(n, l, per_node));
        out.push_back(rail);
    }
    if (nodes < 3) return out;  // two nodes: the one pair is the whole job
    std::vector<Comm> pairs;
    for (int p = 0; p < nodes; ++p) {
        const int a = p, b = (p + 1) % nodes;
        Comm pair{CommKind::Pair, p, {}, {a, b}};
        for (int n : {a, b})
            for (int l = 0; l < per_node; ++l) pair.slots.push_back(slot_of(n, l, per_node));
        pairs.push_back(pair);
    }
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Comm& x, const Comm& y) {
        return pair_round(x.index, nodes) < pair_round(y.index, nodes);
    });
    out.insert(out.end(), pairs.begin(), pairs.end());
    return out;
}

int pair_round(int pair, int nodes) {
    if (nodes % 2 == 1 && pair == nodes - 1) return 2;  // the closing pair shares a node with both neighbours
    return pair % 2;
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t max_bytes) {
    std::vector<std::uint64_t> out;
    if (max_bytes < kSweepStartBytes) {
        std::uint64_t b = std::uint64_t(1) << 20;
        if (max_bytes < b) return out;
        while (b * 2 <= max_bytes) b *= 2;
        return {b};
    }
    for (std::uint64_t b = kSweepStartBytes; b <= max_bytes; b *= 2) out.push_back(b);
    return out;
}

int passes_for(std::uint64_t bytes) { return bytes <= (std::uint64_t(64) << 20) ? 20 : 5; }

// ---- the rank's report as JSON -----------------------------------------------------------------

namespace {

Json opt(const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); }
Json opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json log_json(const NcclLog& log) {
    Json nics = Json::array(), channels = Json::array();
    for (const NcclNic& n : log.nics) nics.push_back(Json{{"name", n.name}, {"port", n.port}, {"link", n.link}});
    for (const NcclChannel& c : log.channels)
        channels.push_back(Json{{"channel", c.channel},
                                {"from", c.from_rank},
                                {"to", c.to_rank},
                                {"direction", c.direction},
                                {"via", c.via}});
    return Json{{"network", opt(log.network)},
                {"nics", nics},
                {"ib_no_device", log.ib_no_device},
                {"gdr_disabled", log.gdr_disabled},
                {"no_net_plugin", log.no_net_plugin},
                {"channels", channels},
                {"warnings", log.warnings}};
}

template <class T>
T get(const nlohmann::json& j, const char* key) {
    if (!j.contains(key)) throw input_error(std::string("rank report lacks \"") + key + "\"", "");
    try {
        return j.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw input_error(std::string("rank report's \"") + key + "\" has the wrong type", "");
    }
}

template <class T>
std::optional<T> get_opt(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
    return get<T>(j, key);
}

NcclLog log_from(const nlohmann::json& j) {
    NcclLog log;
    log.network = get_opt<std::string>(j, "network");
    for (const auto& n : get<nlohmann::json>(j, "nics"))
        log.nics.push_back({get<std::string>(n, "name"), get<int>(n, "port"), get<std::string>(n, "link")});
    log.ib_no_device = get<bool>(j, "ib_no_device");
    log.gdr_disabled = get<std::vector<std::string>>(j, "gdr_disabled");
    log.no_net_plugin = get<bool>(j, "no_net_plugin");
    for (const auto& c : get<nlohmann::json>(j, "channels"))
        log.channels.push_back({get<int>(c, "channel"), get<int>(c, "from"), get<int>(c, "to"),
                                get<std::string>(c, "direction"), get<std::string>(c, "via")});
    log.warnings = get<std::vector<std::string>>(j, "warnings");
    return log;
}

CommKind kind_of(const std::string& s) {
    if (s == "all") return CommKind::All;
    if (s == "rail") return CommKind::Rail;
    if (s == "pair") return CommKind::Pair;
    throw input_error("rank report names a communicator kind \"" + s + "\"", "");
}

}  // namespace

Json to_json(const RankReport& r) {
    Json comms = Json::array();
    for (const CommResult& c : r.comms) {
        Json sizes = Json::array();
        for (const SizeResult& z : c.sizes)
            sizes.push_back(Json{{"bytes", z.bytes},
                                 {"passes", z.passes},
                                 {"ms_per_pass", z.ms_per_pass},
                                 {"checked", z.checked},
                                 {"wrong", z.wrong}});
        comms.push_back(Json{{"kind", to_string(c.kind)},
                             {"index", c.index},
                             {"error", c.error.empty() ? Json(nullptr) : Json(c.error)},
                             {"sizes", sizes}});
    }
    return Json{{"schema", kRankSchema},
                {"node", r.node},
                {"node_index", r.node_index},
                {"nodes", r.nodes},
                {"local_rank", r.local_rank},
                {"per_node", r.per_node},
                {"gpu", Json{{"cuda_ordinal", r.cuda_ordinal}, {"name", r.gpu_name}, {"pci_bus_id", r.gpu_bus_id}}},
                {"nccl", Json{{"path", r.nccl_path}, {"version", r.nccl_version}, {"net", opt(r.nccl_net)}}},
                {"fabric", Json{{"rdma_nics", r.fabric.rdma_nics},
                                {"nic_gbitps", opt(r.fabric.nic_gbitps)},
                                {"rail_nic", r.fabric.rail_nic},
                                {"rail_nic_gbitps", opt(r.fabric.rail_nic_gbitps)},
                                {"hints", r.fabric.hints}}},
                {"log_file", r.log_file},
                {"log", log_json(r.log)},
                {"comms", comms},
                {"rdma", r.rdma ? Json(fabric_rdma::to_json(*r.rdma)) : Json(nullptr)},
                {"error", r.error.empty() ? Json(nullptr) : Json(r.error)}};
}

RankReport rank_report_from_json(const nlohmann::json& j) {
    if (!j.is_object() || get<std::string>(j, "schema") != kRankSchema)
        throw input_error("not a gpuvet rank report (schema " + std::string(kRankSchema) + ")",
                          "run the same gpuvet on every node");
    RankReport r;
    r.node = get<std::string>(j, "node");
    r.node_index = get<int>(j, "node_index");
    r.nodes = get<int>(j, "nodes");
    r.local_rank = get<int>(j, "local_rank");
    r.per_node = get<int>(j, "per_node");
    const auto& g = get<nlohmann::json>(j, "gpu");
    r.cuda_ordinal = get<int>(g, "cuda_ordinal");
    r.gpu_name = get<std::string>(g, "name");
    r.gpu_bus_id = get<std::string>(g, "pci_bus_id");
    const auto& n = get<nlohmann::json>(j, "nccl");
    r.nccl_path = get<std::string>(n, "path");
    r.nccl_version = get<std::string>(n, "version");
    r.nccl_net = get_opt<std::string>(n, "net");
    const auto& f = get<nlohmann::json>(j, "fabric");
    r.fabric.rdma_nics = get<int>(f, "rdma_nics");
    r.fabric.nic_gbitps = get_opt<double>(f, "nic_gbitps");
    r.fabric.rail_nic = get<std::string>(f, "rail_nic");
    r.fabric.rail_nic_gbitps = get_opt<double>(f, "rail_nic_gbitps");
    r.fabric.hints = get<std::vector<std::string>>(f, "hints");
    r.log_file = get<std::string>(j, "log_file");
    r.log = log_from(get<nlohmann::json>(j, "log"));
    for (const auto& c : get<nlohmann::json>(j, "comms")) {
        CommResult x;
        x.kind = kind_of(get<std::string>(c, "kind"));
        x.index = get<int>(c, "index");
        x.error = get_opt<std::string>(c, "error").value_or("");
        for (const auto& z : get<nlohmann::json>(c, "sizes"))
            x.sizes.push_back({get<std::uint64_t>(z, "bytes"), get<int>(z, "passes"), get<double>(z, "ms_per_pass"),
                               get<std::uint64_t>(z, "checked"), get<std::uint64_t>(z, "wrong")});
        r.comms.push_back(std::move(x));
    }
    if (j.contains("rdma") && !j.at("rdma").is_null()) r.rdma = fabric_rdma::rdma_link_from_json(j.at("rdma"));
    r.error = get_opt<std::string>(j, "error").value_or("");
    if (r.nodes < 1 || r.per_node < 1 || r.node_index < 0 || r.node_index >= r.nodes || r.local_rank < 0 ||
        r.local_rank >= r.per_node)
        throw input_error("rank report's place (node " + std::to_string(r.node_index) + " of " +
                              std::to_string(r.nodes) + ", local rank " + std::to_string(r.local_rank) + " of " +
                              std::to_string(r.per_node) + ") does not add up",
                          "");
    return r;
}

// ---- from the ranks' reports to the judge's figures ---------------------------------------------

namespace {

const CommResult* result_of(const RankReport& r, const Comm& c) {
    for (const CommResult& x : r.comms)
        if (x.kind == c.kind && x.index == c.index) return &x;
    return nullptr;
}

std::string comm_name(const Comm& c, const std::vector<std::string>& nodes) {
    auto name = [&](int n) { return std::size_t(n) < nodes.size() ? nodes[std::size_t(n)] : std::to_string(n); };
    if (c.kind == CommKind::Rail) return "rail " + std::to_string(c.index);
    if (c.kind == CommKind::Pair) return "pair " + name(c.nodes[0]) + "+" + name(c.nodes[1]);
    return "the whole job";
}

// Every size all members measured, with the slowest member's time: the collective ends when its
// last rank is done.
std::vector<SweepRow> rows_of(const std::vector<const CommResult*>& members, int n) {
    std::map<std::uint64_t, SweepRow> rows;
    std::map<std::uint64_t, int> seen;
    std::map<std::uint64_t, double> slowest_ms;
    for (const CommResult* m : members)
        for (const SizeResult& z : m->sizes) {
            if (!(z.ms_per_pass > 0)) continue;
            SweepRow& row = rows[z.bytes];
            row.bytes = z.bytes;
            row.checked += z.checked;
            row.wrong += z.wrong;
            slowest_ms[z.bytes] = std::max(slowest_ms[z.bytes], z.ms_per_pass);
            ++seen[z.bytes];
        }
    std::vector<SweepRow> out;
    for (auto& [bytes, row] : rows) {
        if (seen[bytes] != int(members.size())) continue;
        row.algbw_gbps = double(bytes) / (slowest_ms[bytes] * 1e-3) / 1e9;
        row.busbw_gbps = allreduce::bus_bandwidth(row.algbw_gbps, n);
        out.push_back(row);
    }
    return out;
}

}  // namespace

Collected collect_ranks(const std::vector<RankReport>& reports, const std::vector<std::string>& nodes, int per_node) {
    Collected out;
    const int n_nodes = int(nodes.size());
    std::map<int, const RankReport*> by_slot;
    for (const RankReport& r : reports)
        if (r.node_index < n_nodes && r.per_node == per_node)
            by_slot[slot_of(r.node_index, r.local_rank, per_node)] = &r;
    for (int n = 0; n < n_nodes; ++n) {
        NodeFabric f;
        f.node = nodes[std::size_t(n)];
        f.gpus = per_node;
        f.rail_nics.assign(std::size_t(per_node), "");
        bool have = false;
        for (int l = 0; l < per_node; ++l) {
            auto it = by_slot.find(slot_of(n, l, per_node));
            if (it == by_slot.end()) continue;
            const RankReport& r = *it->second;
            if (!have) f.rdma_nics = r.fabric.rdma_nics, f.nic_gbitps = r.fabric.nic_gbitps, have = true;
            f.rail_nics[std::size_t(l)] = r.fabric.rail_nic;
            for (const std::string& h : r.fabric.hints)
                if (std::find(f.hints.begin(), f.hints.end(), h) == f.hints.end()) f.hints.push_back(h);
            f.logs.push_back(r.log);
        }
        out.run.nodes.push_back(std::move(f));
    }
    for (const Comm& c : plan_comms(n_nodes, per_node)) {
        std::vector<const CommResult*> members;
        std::string missing;
        for (int s : c.slots) {
            auto it = by_slot.find(s);
            const CommResult* x = it == by_slot.end() ? nullptr : result_of(*it->second, c);
            const std::string who = nodes[std::size_t(s / per_node)] + " GPU " + std::to_string(s % per_node);
            if (!x) missing = who + ": " + (it == by_slot.end() ? "no report" : it->second->error);
            else if (!x->error.empty()) missing = who + ": " + x->error;
            else members.push_back(x);
        }
        if (!missing.empty()) {
            out.notes.push_back(comm_name(c, nodes) + " was not measured (" + missing + ")");
            continue;
        }
        std::vector<SweepRow> rows = rows_of(members, int(c.slots.size()));
        if (rows.empty()) {
            out.notes.push_back(comm_name(c, nodes) + " measured no size on every rank");
            continue;
        }
        Measured m;
        for (int n : c.nodes) m.nodes.push_back(nodes[std::size_t(n)]);
        if (c.kind == CommKind::Rail) m.rail = c.index;
        m.bytes = rows.back().bytes;
        m.busbw_gbps = rows.back().busbw_gbps;
        for (const SweepRow& row : rows) m.checked += row.checked, m.wrong += row.wrong;
        if (c.kind == CommKind::All) out.run.all = m, out.sweep = rows;
        else (c.kind == CommKind::Rail ? out.run.rails : out.run.pairs).push_back(m);
    }
    return out;
}

}  // namespace gpuvet::fabric_allreduce
