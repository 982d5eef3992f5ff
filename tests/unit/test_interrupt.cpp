// The stop handlers: the first signal sets the flag, the second exits with 3 after removing the files
// registered with CleanupPath. A death test: it runs in a forked child, so the signals stay there.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/interrupt.hpp"

using namespace gpuvet;

namespace {
std::filesystem::path temp_file(const char* name) {
    auto p = std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()));
    std::ofstream(p) << "x";
    return p;
}
}  // namespace

TEST(InterruptDeathTest, FirstSignalStopsSecondExitsWith3AndRemovesRegisteredFiles) {
    auto kept = temp_file("gpuvet-unit-kept");
    auto removed = temp_file("gpuvet-unit-removed");
    EXPECT_EXIT(
        {
            install_stop_handlers(false);
            CleanupPath reg(removed);
            { CleanupPath released(kept); }  // out of scope: no longer removed
            std::raise(SIGTERM);
            if (!stop_flag().load()) std::_Exit(10);  // the first signal only asks to stop
            std::raise(SIGINT);
            std::_Exit(11);  // not reached: the second signal exits
        },
        testing::ExitedWithCode(3), "interrupted again");
    EXPECT_FALSE(std::filesystem::exists(removed));
    EXPECT_TRUE(std::filesystem::exists(kept));
    std::filesystem::remove(kept);
}
