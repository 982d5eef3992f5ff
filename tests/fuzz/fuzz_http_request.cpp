// Fuzzes the exporter's HTTP request parser (any client on the network may send anything): every
// input is Incomplete, Complete with what it consumed inside the buffer, or refused; a buffer of
// pipelined requests is walked to its end without a loop that does not advance.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "monitor/http_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view buf(reinterpret_cast<const char*>(data), size);
    for (int n = 0; n < 1000; ++n) {
        gpuvet::HttpRequest r = gpuvet::parse_http_request(buf);
        if (r.state != gpuvet::HttpRequest::Parse::Complete) break;
        if (r.consumed == 0 || r.consumed > buf.size() || r.path.empty() || r.path[0] != '/') std::abort();
        buf.remove_prefix(r.consumed);
    }
    return 0;
}
