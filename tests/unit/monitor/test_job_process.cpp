// The job's end in a shell's words: the exit codes a script that runs gpuvet run sees.
#include <gtest/gtest.h>

#include <cerrno>

#include "monitor/job_process.hpp"

using namespace gpuvet;

TEST(JobProcess, ExitCodesAreTheOnesAShellGives) {
    EXPECT_EQ(shell_exit_code({false, 0, 0}), 0);
    EXPECT_EQ(shell_exit_code({false, 3, 0}), 3);
    EXPECT_EQ(shell_exit_code({true, 9, 0}), 137);
    EXPECT_EQ(shell_exit_code({true, 2, 0}), 130);
    EXPECT_EQ(exec_failure_exit_code(ENOENT), 127);
    EXPECT_EQ(exec_failure_exit_code(EACCES), 126);
    EXPECT_EQ(exec_failure_text(ENOENT), "command not found");
}
