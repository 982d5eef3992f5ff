// The one HTTP/1.1 request parser of gpuvet export: a request at the front of a connection's
// buffer, or why it is not one. Pure (no socket), so the tests and the fuzzer call it directly.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuvet {

// gpuvet's own bounds: a scrape's request is a few hundred bytes.
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
inline constexpr std::size_t kMaxTargetBytes = 8 * 1024;

// One request parsed from the front of a connection's buffer (pure, for the tests and the fuzzer).
struct HttpRequest {
    enum class Parse { Incomplete, Complete, Bad, TooLarge, TargetTooLong };
    Parse state = Parse::Incomplete;
    std::size_t consumed = 0;  // bytes of the buffer this request took
    std::string method, path;
    bool keep_alive = true;
};
HttpRequest parse_http_request(std::string_view buffer);

}  // namespace gpuvet
