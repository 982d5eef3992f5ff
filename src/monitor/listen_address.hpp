// `gpuvet export --listen HOST:PORT`: parsing and the loopback test behind the warning for an
// address other machines can reach. Pure: no socket is opened here.
#pragma once
#include <string>

namespace gpuvet {

struct ListenAddress {
    std::string host;  // as httplib binds it: "127.0.0.1", "::1", "0.0.0.0", "localhost", a name
    int port = 0;
};

// "127.0.0.1:9400", "[::1]:9400", "localhost:9400", ":9400" (every interface, like dcgm-exporter's
// default). Anything else is a usage error naming the problem and an example.
ListenAddress parse_listen_address(const std::string& text);

// True for addresses only this machine reaches: 127.0.0.0/8, ::1, ::ffff:127.x.x.x, "localhost".
// Every other address (0.0.0.0, ::, a LAN address, a host name) counts as reachable from outside.
bool is_loopback(const std::string& host);

}  // namespace gpuvet
