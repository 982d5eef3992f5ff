// Typed errors. Code below main throws these; the boundary (main) turns them into a message,
// advice and an exit code. Nothing below main calls exit().
#pragma once
#include <stdexcept>
#include <string>

namespace gpuvet {

enum class ErrorKind {
    Usage,     // bad command line                       -> exit 2
    Input,     // unreadable or invalid file/value       -> exit 2
    Driver,    // NVIDIA library missing or failing      -> exit 3
    Runtime,   // the machine would not let us measure   -> exit 3
    Internal,  // a bug in gpuvet                        -> exit 3
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, std::string message, std::string advice)
        : std::runtime_error(std::move(message)), kind_(kind), advice_(std::move(advice)) {}
    ErrorKind kind() const { return kind_; }
    const std::string& advice() const { return advice_; }

private:
    ErrorKind kind_;
    std::string advice_;
};

inline Error usage_error(std::string msg, std::string advice) {
    return {ErrorKind::Usage, std::move(msg), std::move(advice)};
}
inline Error input_error(std::string msg, std::string advice) {
    return {ErrorKind::Input, std::move(msg), std::move(advice)};
}
inline Error runtime_error(std::string msg, std::string advice) {
    return {ErrorKind::Runtime, std::move(msg), std::move(advice)};
}
// A broken promise inside gpuvet itself: the user can only report it.
inline Error internal_error(std::string msg) {
    return {ErrorKind::Internal, std::move(msg),
            "this is a gpuvet bug: please report it with the JSON report attached"};
}

// Thrown where a stop (Ctrl-C, SIGTERM) cuts a measurement short. Not an Error: nothing went wrong
// with the machine. The runner and the per-GPU loops turn it into an "interrupted" result (SKIP),
// and the figure it cut short is absent with the reason "interrupted", never a zero.
struct Interrupted : std::exception {
    const char* what() const noexcept override { return "interrupted"; }
};

// Exit codes, DESIGN.md §4.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int check_failed = 1;
inline constexpr int bad_input = 2;
inline constexpr int could_not_run = 3;
}  // namespace exit_code

inline int exit_code_for(ErrorKind k) {
    return (k == ErrorKind::Usage || k == ErrorKind::Input) ? exit_code::bad_input : exit_code::could_not_run;
}

const char* to_string(ErrorKind k);

}  // namespace gpuvet
