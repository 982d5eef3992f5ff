// The stop handlers: the first signal sets the flag, the second exits with 3 after removing the files
// registered with CleanupPath. A death test: it runs in a forked child, so the signals stay there.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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

// A full-screen program's terminal: the second signal puts back the settings saved when the
// program took the terminal and writes the sequence that leaves its screen mode, then exits 3.
TEST(InterruptDeathTest, SecondSignalRestoresAFullScreenTerminal) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT_GE(master, 0);
    ASSERT_EQ(grantpt(master), 0);
    ASSERT_EQ(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    ASSERT_GE(slave, 0);
    termios before{};
    ASSERT_EQ(tcgetattr(slave, &before), 0);
    ASSERT_TRUE(before.c_lflag & ECHO);
    EXPECT_EXIT(
        {
            install_stop_handlers(false);
            TerminalRestore restore(slave, "<leave>");
            termios raw = before;
            raw.c_lflag &= ~(ECHO | ICANON);  // what curses' noecho() and cbreak() do
            tcsetattr(slave, TCSANOW, &raw);
            std::raise(SIGTERM);
            if (!stop_flag().load()) std::_Exit(10);
            std::raise(SIGINT);
            std::_Exit(11);
        },
        testing::ExitedWithCode(3), "interrupted again");
    termios after{};
    ASSERT_EQ(tcgetattr(slave, &after), 0);
    EXPECT_TRUE(after.c_lflag & ECHO);
    EXPECT_TRUE(after.c_lflag & ICANON);
    char buf[64] = {0};
    fcntl(master, F_SETFL, O_NONBLOCK);
    ssize_t n = read(master, buf, sizeof buf - 1);
    EXPECT_NE(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0).find("<leave>"), std::string::npos);
    close(slave);
    close(master);
}
