#include "checks/host_network.hpp"

#include "core/context.hpp"
#include "core/strings.hpp"

namespace gpuvet {

std::optional<std::string> HostNetworkCheck::unmet_requirement(const CheckContext&) const {
    if (!settings_.server)
        return std::string(
            "no iperf3 server given: pass --net-server HOST[:PORT] (a peer running `iperf3 -s` "
            "or `gpuvet host net --serve`)");
    return std::nullopt;
}

namespace {
// What the iperf3 client's error says about the peer, in the user's terms.
std::string peer_problem(const std::string& where, const IperfOutcome& o) {
    const std::string& error = o.error;
    if (error.find("unable to connect") != std::string::npos)
        return "nothing accepts iperf3 connections at " + where + " (" + error + ")";
    if (o.timed_out)
        return where +
               " accepts connections but does not answer as an iperf3 server (no reply before the time limit): "
               "another service listens on that port, or the server is busy with another client";
    return where + " does not answer as an iperf3 server (" + error + ")";
}
}  // namespace

CheckResult network_result(const HostPort& server, int streams, int seconds, const IperfOutcome& up,
                           const IperfOutcome& down) {
    CheckResult r;
    std::string where = server.host + ":" + std::to_string(server.port);
    r.measurements.push_back(Measurement::textual("server", "iperf3 server", where));
    r.measurements.push_back(Measurement::number("streams", "Parallel TCP streams", streams, "count"));
    Reference ref;
    ref.source = "TCP, " + std::to_string(streams) + " stream(s), " + std::to_string(seconds) +
                 " s per direction, bits received per second (decimal Gbit/s) as iperf3 reports; compare with the "
                 "NIC's link speed (ethtool)";
    auto add = [&](const char* key, const char* label, const IperfOutcome& o) {
        if (o.received_gbitps)
            r.measurements.push_back(Measurement::number(key, label, *o.received_gbitps, "Gbit/s").against(ref));
        else r.measurements.push_back(Measurement::absent(key, label, "Gbit/s", o.error));
    };
    add("upload_gbitps", "Upload (to server)", up);
    add("download_gbitps", "Download (from server)", down);
    auto retr = [&](const char* key, const char* label, const IperfOutcome& o) {
        if (o.retransmits) r.measurements.push_back(Measurement::number(key, label, *o.retransmits, "count"));
        else if (o.received_gbitps)
            r.measurements.push_back(Measurement::absent(key, label, "count", "the sender did not report retransmits"));
    };
    retr("upload_retransmits", "Upload retransmits", up);
    retr("download_retransmits", "Download retransmits", down);
    const bool up_cut = up.stopped, down_cut = down.stopped;
    if (!up.received_gbitps && !down.received_gbitps && (up_cut || down_cut)) {
        r.verdict = Verdict::Skip;  // a stop is not a network failure
        r.summary = "Network to " + where + " not measured: interrupted.";
        return r;
    }
    if (!up.received_gbitps && !down.received_gbitps) {
        // Nothing was measured: that is about the peer, not a verdict on this host's network.
        r.verdict = Verdict::Error;
        r.summary = "Could not run: " + peer_problem(where, up.error.empty() ? down : up) + ".";
        r.details.push_back("start `iperf3 -s` (or `gpuvet host net --serve`) on " + server.host +
                            ", and open TCP port " + std::to_string(server.port) + " in its firewall");
        return r;
    }
    // One direction cut short by a stop leaves the other judged; a direction that failed warns.
    r.verdict = (up.received_gbitps || up_cut) && (down.received_gbitps || down_cut) ? Verdict::Pass : Verdict::Warn;
    std::string s = "To " + where + ":";
    if (up.received_gbitps) s += " upload " + format_number(*up.received_gbitps) + " Gbit/s";
    else s += std::string(up_cut ? " upload not measured (" : " upload failed (") + up.error + ")";
    if (down.received_gbitps) s += ", download " + format_number(*down.received_gbitps) + " Gbit/s";
    else s += std::string(down_cut ? ", download not measured (" : ", download failed (") + down.error + ")";
    r.summary = s + ".";
    return r;
}

std::vector<CheckResult> HostNetworkCheck::run(CheckContext& ctx) {
    IperfClientOptions o;
    o.server = parse_host_port(*settings_.server);
    o.seconds = int(settings_.seconds + 0.5);
    o.streams = settings_.streams;
    if (ctx.progress) ctx.progress->update("iperf3 upload to " + o.server.host);
    IperfOutcome up = iperf_client(o, ctx.stop);
    IperfOutcome down;
    if (ctx.stop_requested()) down.error = kInterrupted;
    else if (!up.received_gbitps && !up.error.empty()) down.error = up.error;  // the same peer would fail the same way
    else {
        if (ctx.progress) ctx.progress->update("iperf3 download from " + o.server.host);
        o.reverse = true;
        down = iperf_client(o, ctx.stop);
    }
    return {network_result(o.server, o.streams, o.seconds, up, down)};
}

}  // namespace gpuvet
