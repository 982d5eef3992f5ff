#include "gpu/nccl_log.hpp"

#include <cctype>
#include <charconv>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

std::optional<int> number_at(std::string_view s, std::size_t& at) {
    int v = 0;
    auto [p, ec] = std::from_chars(s.data() + at, s.data() + s.size(), v);
    if (ec != std::errc() || v < 0) return std::nullopt;
    at = std::size_t(p - s.data());
    return v;
}

// "[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>" -> the NICs.
std::vector<NcclNic> nic_list(std::string_view s) {
    std::vector<NcclNic> out;
    s = s.substr(0, s.find(';'));
    for (const std::string& item : split(s, ' ')) {
        if (item.size() < 4 || item[0] != '[') continue;
        auto close = item.find(']'), colon = item.rfind(':'), slash = item.rfind('/');
        if (close == std::string::npos || colon == std::string::npos || slash == std::string::npos || colon < close ||
            slash < colon)
            continue;
        NcclNic n;
        n.name = item.substr(close + 1, colon - close - 1);
        std::size_t at = colon + 1;
        auto port = number_at(item, at);
        if (n.name.empty() || !port || at != slash) continue;
        n.port = *port;
        n.link = item.substr(slash + 1);
        out.push_back(n);
    }
    return out;
}

// " 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA" after "Channel".
std::optional<NcclChannel> channel_line(std::string_view s) {
    NcclChannel c;
    std::size_t at = s.find_first_not_of(' ');
    if (at == std::string::npos) return std::nullopt;
    auto ch = number_at(s, at);
    if (!ch) return std::nullopt;
    c.channel = *ch;
    auto colon = s.find(" : ", at), arrow = s.find(" -> ", at), via = s.find(" via ", at);
    if (colon == std::string::npos || arrow == std::string::npos || via == std::string::npos || arrow < colon ||
        via < arrow)
        return std::nullopt;
    at = colon + 3;
    auto from = number_at(s, at);
    at = arrow + 4;
    auto to = number_at(s, at);
    if (!from || !to) return std::nullopt;
    c.from_rank = *from;
    c.to_rank = *to;
    std::string_view between = s.substr(at, via - at);
    if (between.find("[send]") != std::string_view::npos) c.direction = "send";
    else if (between.find("[receive]") != std::string_view::npos) c.direction = "receive";
    c.via = trim(s.substr(via + 5));
    auto space = c.via.find(' ');
    if (space != std::string::npos) c.via.resize(space);
    if (c.via.empty()) return std::nullopt;
    return c;
}

void read_line(std::string_view line, NcclLog& log) {
    auto after = [&](std::string_view marker) -> std::optional<std::string_view> {
        auto at = line.find(marker);
        if (at == std::string_view::npos) return std::nullopt;
        return line.substr(at + marker.size());
    };
    if (auto w = after("NCCL WARN ")) {
        log.warnings.push_back(trim(*w));
        if (w->find("Failed to initialize any NET plugin") != std::string_view::npos) log.no_net_plugin = true;
    }
    if (auto n = after("Using network ")) log.network = trim(*n);
    if (auto n = after("NET/IB : Using ")) log.nics = nic_list(*n);
    if (line.find("NET/IB : No device found") != std::string_view::npos) log.ib_no_device = true;
    if (auto g = after("GPU Direct RDMA Disabled for HCA ")) {
        auto q1 = g->find('\''), q2 = g->rfind('\'');
        if (q1 != std::string_view::npos && q2 > q1) log.gdr_disabled.emplace_back(g->substr(q1 + 1, q2 - q1 - 1));
    }
    if (auto c = after("NCCL INFO Channel "))
        if (auto ch = channel_line(*c)) log.channels.push_back(*ch);
}

}  // namespace

NcclLog parse_nccl_log(std::string_view text) {
    NcclLog log;
    std::size_t start = 0;
    for (int lines = 0; start < text.size() && lines < 100000; ++lines) {
        auto end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        read_line(text.substr(start, end - start), log);
        start = end + 1;
    }
    return log;
}

}  // namespace gpuvet
