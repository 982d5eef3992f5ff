#include "cli/suggest.hpp"

#include <vector>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

std::optional<std::string> closest(const std::string& typed, const std::vector<std::string>& names) {
    std::size_t best = SIZE_MAX;
    std::string pick;
    for (auto& n : names) {
        std::size_t d = edit_distance(typed, n);
        if (d < best) {
            best = d;
            pick = n;
        }
    }
    // Only a near miss is a suggestion; a distant one would only confuse.
    if (pick.empty() || best > std::max<std::size_t>(2, typed.size() / 3)) return std::nullopt;
    return pick;
}

std::vector<std::string> option_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::Option* o : app.get_options()) {
        for (auto& l : o->get_lnames()) out.push_back("--" + l);
        for (auto& s : o->get_snames()) out.push_back("-" + s);
    }
    return out;
}

}  // namespace

std::optional<std::string> suggest_fix(const CLI::App& app, int argc, const char* const* argv) {
    const CLI::App* cur = &app;
    bool command_started = false;  // a leaf command that runs a command (run) has seen its first word
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") break;
        if (starts_with(a, "-")) {
            std::string name = a.substr(0, a.find('='));
            auto names = option_names(*cur);
            bool known = false;
            for (auto& n : names) known = known || n == name;
            if (!known) {
                // An option of the parent apps is valid here too.
                for (const CLI::App* p = cur->get_parent(); p && !known; p = p->get_parent())
                    for (auto& n : option_names(*p)) known = known || n == name;
            }
            // `gpuvet run python -c ...`: the job's own options need the `--` before the command.
            if (!known && command_started)
                return "unknown option '" + name + "' after the command: put the command after --, e.g. gpuvet " +
                       cur->get_name() + " [options] -- CMD ARGS...";
            if (!known) {
                if (auto s = closest(name, names)) return "unknown option '" + name + "'; did you mean '" + *s + "'?";
                return "unknown option '" + name + "'; see '" + cur->get_name() + " --help'";
            }
            continue;
        }
        std::vector<std::string> subs;
        for (const CLI::App* s : cur->get_subcommands({})) subs.push_back(s->get_name());
        if (subs.empty()) {  // a positional value of a leaf command
            command_started = command_started || cur->get_name() == "run";
            continue;
        }
        bool found = false;
        for (const CLI::App* s : cur->get_subcommands({}))
            if (s->get_name() == a) {
                cur = s;
                found = true;
            }
        if (!found) {
            if (auto s = closest(a, subs)) return "unknown command '" + a + "'; did you mean '" + *s + "'?";
            std::string list;
            for (auto& s : subs) list += (list.empty() ? "" : ", ") + s;
            return "unknown command '" + a + "'; the commands are: " + list;
        }
    }
    return std::nullopt;
}

}  // namespace gpuvet
