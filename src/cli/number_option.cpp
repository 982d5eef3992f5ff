#include "cli/number_option.hpp"

#include "core/error.hpp"

namespace gpuvet {

namespace {

std::optional<Error>& pending() {
    static std::optional<Error> e;
    return e;
}

const char* type_name(const NumberRule& r) {
    switch (r.unit) {
        case NumberUnit::Bytes: return "SIZE";
        case NumberUnit::Seconds: return "DURATION";
        case NumberUnit::Count: return "COUNT";
        case NumberUnit::None: break;
    }
    return r.whole ? "INT" : "NUMBER";
}

template <class T>
CLI::Option* add(CLI::App& app, const std::string& name, T& target, NumberRule rule, const std::string& help,
                 bool whole) {
    rule.whole = rule.whole || whole;
    auto store = [&target, rule, name](const std::string& text) {
        try {
            double v = parse_number_option(name, text, rule);
            target = T(v);
        } catch (const Error& e) {
            if (!pending()) pending() = e;  // the first bad option is the one reported
        }
    };
    std::string line = help + (help.empty() ? "" : "; ") + describe_range(rule);
    return app.add_option_function<std::string>(name, store, line)->type_name(type_name(rule));
}

}  // namespace

void rethrow_option_error() {
    if (auto& e = pending()) {
        Error copy = *e;
        e.reset();
        throw copy;
    }
}

CLI::Option* add_number_option(CLI::App& app, const std::string& name, double& target, const NumberRule& rule,
                               const std::string& help) {
    return add(app, name, target, rule, help, false);
}
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::optional<double>& target,
                               const NumberRule& rule, const std::string& help) {
    return add(app, name, target, rule, help, false);
}
CLI::Option* add_number_option(CLI::App& app, const std::string& name, int& target, const NumberRule& rule,
                               const std::string& help) {
    return add(app, name, target, rule, help, true);
}
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::int64_t& target, const NumberRule& rule,
                               const std::string& help) {
    return add(app, name, target, rule, help, true);
}
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::optional<int>& target,
                               const NumberRule& rule, const std::string& help) {
    return add(app, name, target, rule, help, true);
}
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& target,
                               const NumberRule& rule, const std::string& help) {
    return add(app, name, target, rule, help, true);
}

}  // namespace gpuvet
