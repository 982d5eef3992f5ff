#include "core/host_fs.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/strings.hpp"

namespace gpuvet {

std::filesystem::path HostFs::path(std::string_view abs) const {
    std::string rel(abs);
    while (!rel.empty() && rel.front() == '/') rel.erase(rel.begin());
    return root_ / rel;
}

std::optional<std::string> HostFs::read(std::string_view abs) const {
    std::ifstream in(path(abs), std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return ss.str();
}

std::optional<std::string> HostFs::read_line(std::string_view abs) const {
    auto s = read(abs);
    if (!s) return std::nullopt;
    auto nl = s->find('\n');
    return trim(nl == std::string::npos ? *s : s->substr(0, nl));
}

std::optional<long long> HostFs::read_int(std::string_view abs) const {
    auto s = read_line(abs);
    if (!s || s->empty()) return std::nullopt;
    long long v = 0;
    auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
    if (ec != std::errc() || p != s->data() + s->size()) return std::nullopt;
    return v;
}

bool HostFs::exists(std::string_view abs) const {
    std::error_code ec;
    return std::filesystem::exists(path(abs), ec);
}

std::vector<std::string> HostFs::list(std::string_view abs_dir) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(path(abs_dir), ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
        out.push_back(it->path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<int> count_cpu_list(std::string_view list) {
    std::string s = trim(list);
    if (s.empty()) return std::nullopt;
    int count = 0;
    for (auto& part : split(s, ',')) {
        auto dash = part.find('-');
        auto num = [](std::string_view t) -> std::optional<int> {
            int v = 0;
            auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
            if (ec != std::errc() || p != t.data() + t.size() || v < 0) return std::nullopt;
            return v;
        };
        if (dash == std::string::npos) {
            if (!num(part)) return std::nullopt;
            ++count;
        } else {
            auto a = num(std::string_view(part).substr(0, dash));
            auto b = num(std::string_view(part).substr(dash + 1));
            if (!a || !b || *b < *a) return std::nullopt;
            count += *b - *a + 1;
        }
    }
    return count;
}

}  // namespace gpuvet
