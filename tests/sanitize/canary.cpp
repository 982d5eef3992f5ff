// Defects the sanitized tree must catch, one per mode: proves the wrapper (tests/sanitize/checked)
// fails a test even when the test does not look at the process's exit status.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Catalog {
    std::vector<std::string> names{"llama-2-7b", "mixtral-8x7b", "bert-base"};
    [[gnu::noinline]] const std::vector<std::string>& all() const { return names; }
};

// Opaque to the optimiser, so the defects below survive -O2 and draw no compile-time warning.
volatile int g_opaque = 0;
void* volatile g_sink = nullptr;

[[gnu::noinline]] Catalog make_catalog() { return Catalog{}; }

// The defect gpuvet once had: a range-for over a temporary's reference accessor.
[[gnu::noinline]] std::size_t dangling() {
    std::size_t n = 0;
    g_sink = const_cast<std::vector<std::string>*>(&make_catalog().all());  // the temporary dies here
    for (const auto& s : *static_cast<std::vector<std::string>*>(g_sink)) n += s.size();
    return n;
}

[[gnu::noinline]] void leak() {
    g_sink = std::malloc(4096 + g_opaque);
    g_sink = nullptr;
}

[[gnu::noinline]] int overflow() {
    int big = 0x7fffffff - g_opaque;
    return big + 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "dangling-temporary") std::printf("%zu\n", dangling());
    else if (mode == "leak") leak();
    else if (mode == "undefined") std::printf("%d\n", overflow());
    else if (mode != "clean") {
        std::fprintf(stderr, "usage: sanitize_canary dangling-temporary|leak|undefined|clean\n");
        return 2;
    }
    return 1;
}
