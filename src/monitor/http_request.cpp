#include "monitor/http_request.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

namespace gpuvet {

namespace {

bool token_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// The header's lines, each without its CRLF; false when a line does not end in CRLF.
bool split_lines(std::string_view head, std::vector<std::string_view>& lines) {
    while (!head.empty()) {
        std::size_t nl = head.find('\n');
        if (nl == std::string_view::npos || nl == 0 || head[nl - 1] != '\r') return false;
        lines.push_back(head.substr(0, nl - 1));
        head.remove_prefix(nl + 1);
    }
    return true;
}

bool parse_request_line(std::string_view line, HttpRequest& r, bool& http10) {
    std::size_t s1 = line.find(' '), s2 = s1 == std::string_view::npos ? s1 : line.find(' ', s1 + 1);
    if (s2 == std::string_view::npos || line.find(' ', s2 + 1) != std::string_view::npos) return false;
    std::string_view method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1),
                     version = line.substr(s2 + 1);
    if (method.empty() || !std::all_of(method.begin(), method.end(), token_char)) return false;
    if (version != "HTTP/1.1" && version != "HTTP/1.0") return false;
    if (target.empty() || target[0] != '/') return false;
    for (char c : target)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F) return false;
    r.method = std::string(method);
    r.path = std::string(target.substr(0, target.find('?')));
    http10 = version == "HTTP/1.0";
    return true;
}

}  // namespace

HttpRequest parse_http_request(std::string_view buf) {
    HttpRequest r;
    std::size_t end = buf.find("\r\n\r\n");
    std::size_t line_end = buf.find('\n');
    if ((line_end == std::string_view::npos ? buf.size() : line_end) > kMaxTargetBytes + 64)
        return r.state = HttpRequest::Parse::TargetTooLong, r;
    if (end == std::string_view::npos) {
        if (buf.size() > kMaxHeaderBytes) r.state = HttpRequest::Parse::TooLarge;
        // A bare LF where the header should end: no CRLF CRLF will ever come.
        else if (buf.find("\n\n") != std::string_view::npos) r.state = HttpRequest::Parse::Bad;
        return r;
    }
    if (end + 4 > kMaxHeaderBytes) return r.state = HttpRequest::Parse::TooLarge, r;
    r.consumed = end + 4;
    std::vector<std::string_view> lines;
    bool http10 = false;
    if (!split_lines(buf.substr(0, end + 2), lines) || lines.empty() || !parse_request_line(lines[0], r, http10))
        return r.state = HttpRequest::Parse::Bad, r;
    std::string connection;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        std::string_view l = lines[i];
        std::size_t colon = l.find(':');
        if (colon == 0 || colon == std::string_view::npos || !std::all_of(l.begin(), l.begin() + colon, token_char))
            return r.state = HttpRequest::Parse::Bad, r;
        std::string name = lower(l.substr(0, colon));
        std::string value = lower(l.substr(colon + 1));
        value.erase(0, value.find_first_not_of(" \t"));
        // A GET has no body: one announced is refused, so no bytes of it are read as a request.
        if (name == "transfer-encoding" || (name == "content-length" && value.find_first_not_of("0 \t") != value.npos))
            return r.state = HttpRequest::Parse::Bad, r;
        if (name == "connection") connection = value;
    }
    r.keep_alive =
        http10 ? connection.find("keep-alive") != std::string::npos : connection.find("close") == std::string::npos;
    r.state = HttpRequest::Parse::Complete;
    return r;
}

}  // namespace gpuvet
