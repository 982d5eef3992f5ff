#include "monitor/listen_address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace gpuvet {

namespace {

constexpr const char* kExample = "give HOST:PORT, e.g. --listen 127.0.0.1:9400 or --listen [::1]:9400";

Error bad(const std::string& text, const std::string& why) {
    return usage_error("--listen '" + text.substr(0, 80) + "': " + why, kExample);
}

int parse_port(const std::string& text, const std::string& p) {
    if (p.empty()) throw bad(text, "no port after the ':'");
    if (p.size() > 5 || !std::all_of(p.begin(), p.end(), [](unsigned char c) { return std::isdigit(c); }))
        throw bad(text, "the port '" + p.substr(0, 20) + "' is not a number from 1 to 65535");
    int port = std::stoi(p);
    if (port < 1 || port > 65535) throw bad(text, "the port " + p + " is not from 1 to 65535");
    return port;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
    ListenAddress a;
    std::string port_text;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string::npos) throw bad(text, "an IPv6 address opened with '[' has no ']'");
        a.host = text.substr(1, close - 1);
        if (close + 1 >= text.size() || text[close + 1] != ':') throw bad(text, "no ':PORT' after the ']'");
        port_text = text.substr(close + 2);
        in6_addr v6{};
        if (inet_pton(AF_INET6, a.host.c_str(), &v6) != 1) throw bad(text, "'" + a.host + "' is not an IPv6 address");
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos) throw bad(text, "no ':PORT'");
        a.host = text.substr(0, colon);
        port_text = text.substr(colon + 1);
        if (a.host.find(':') != std::string::npos) throw bad(text, "an IPv6 address must be written in brackets");
        if (a.host.empty()) a.host = "0.0.0.0";  // ":9400": every interface
        for (unsigned char c : a.host)
            if (!(std::isalnum(c) || c == '.' || c == '-' || c == '_'))
                throw bad(text, "'" + a.host.substr(0, 60) + "' is not an address or host name");
    }
    a.port = parse_port(text, port_text);
    return a;
}

bool is_loopback(const std::string& host) {
    std::string h = host;
    std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
    if (h == "localhost") return true;
    in_addr v4{};
    // inet_aton, not inet_pton: it reads the short forms the resolver binds too ("127.1", "2130706433").
    if (inet_aton(h.c_str(), &v4) != 0) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
        return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
    }
    return false;  // a host name other than localhost may resolve anywhere
}

}  // namespace gpuvet
