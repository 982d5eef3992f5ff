#include "specs/toml_input.hpp"

#include "core/error.hpp"
#include "core/text_limits.hpp"

namespace gpuvet {

std::string toml_where(const std::string& origin, const toml::source_region& src) {
    return origin + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

toml::table parse_toml_document(std::string_view text, const std::string& origin, const std::string& advice) {
    check_toml_nesting(text, origin);
    try {
        return toml::parse(text, origin);
    } catch (const toml::parse_error& e) {
        throw input_error(toml_where(origin, e.source()) + ": " + std::string(e.description()), advice);
    }
}

}  // namespace gpuvet
