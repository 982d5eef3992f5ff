// The training harness under careless settings and scripts: a watchdog value that is not seconds is
// said, a failure the script does not classify is ERROR (the check could not run), never a FAIL
// with a blank reason.
#include <gtest/gtest.h>

#include <cstdlib>

#include "checks/gpu_train.hpp"
#include "core/error.hpp"
#include "train/train_settings.hpp"

using namespace gpuvet;

TEST(TrainWatchdog, ABadValueIsAUsageErrorNamingIt) {
    for (const char* bad : {"0", "-1", "abc", "1e9", "3s"}) {
        ::setenv("GPUVET_TRAIN_WATCHDOG_S", bad, 1);
        try {
            train_watchdog_s(120);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage);
            EXPECT_NE(std::string(e.what()).find(std::string("GPUVET_TRAIN_WATCHDOG_S=") + bad), std::string::npos);
        }
    }
    ::setenv("GPUVET_TRAIN_WATCHDOG_S", "3", 1);
    EXPECT_DOUBLE_EQ(train_watchdog_s(120), 3);
    ::unsetenv("GPUVET_TRAIN_WATCHDOG_S");
    EXPECT_DOUBLE_EQ(train_watchdog_s(120), 120);
}

TEST(TrainResult, AnUnclassifiedFailureIsErrorWithItsWords) {
    CheckResult unknown = train_error_result("<unknown>", "\x1b]0;PWNED\x07cleared");
    EXPECT_EQ(unknown.verdict, Verdict::Error);
    EXPECT_NE(unknown.summary.find("error_kind '<unknown>'"), std::string::npos) << unknown.summary;
    CheckResult blank = train_error_result("", "");
    EXPECT_EQ(blank.verdict, Verdict::Error);
    EXPECT_NE(blank.summary.find("gave no message"), std::string::npos) << blank.summary;
    EXPECT_EQ(train_error_result("oom", "out of memory").verdict, Verdict::Fail);
    EXPECT_EQ(train_error_result("no_torch", "no torch").verdict, Verdict::Skip);
}
