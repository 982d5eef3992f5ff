// Finding the interpreter (--python, $VIRTUAL_ENV, $CONDA_PREFIX, PATH) and what a script's
// outcome means, on constructed environments and outcomes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "train/python_env.hpp"
#include "train/python_script.hpp"

using namespace gpuvet;
namespace fs = std::filesystem;

namespace {

fs::path fake_python(const fs::path& dir, const char* name) {
    fs::create_directories(dir);
    fs::path p = dir / name;
    std::ofstream(p) << "#!/bin/sh\n";
    fs::permissions(p, fs::perms::owner_all);
    return p;
}

EnvLookup env_of(std::map<std::string, std::string> m) {
    return [m](const char* k) -> std::optional<std::string> {
        auto it = m.find(k);
        if (it == m.end()) return std::nullopt;
        return it->second;
    };
}

}  // namespace

TEST(PythonEnv, OrderIsFlagThenVirtualenvThenCondaThenPath) {
    fs::path root = fs::temp_directory_path() / ("gpuvet-py-" + std::to_string(::getpid()));
    fake_python(root / "venv/bin", "python");
    fake_python(root / "conda/bin", "python");
    fake_python(root / "path", "python3");
    auto all = env_of({{"VIRTUAL_ENV", (root / "venv").string()},
                       {"CONDA_PREFIX", (root / "conda").string()},
                       {"PATH", "/nonexistent:" + (root / "path").string()}});
    EXPECT_EQ(find_python((root / "path/python3").string(), all).found->how, "--python");
    EXPECT_EQ(find_python(std::nullopt, all).found->how, "$VIRTUAL_ENV");
    auto conda = env_of({{"CONDA_PREFIX", (root / "conda").string()}, {"PATH", (root / "path").string()}});
    EXPECT_EQ(find_python(std::nullopt, conda).found->path, (root / "conda/bin/python").string());
    auto path = env_of({{"PATH", "/nonexistent:" + (root / "path").string()}});
    EXPECT_EQ(find_python(std::nullopt, path).found->path, (root / "path/python3").string());
    auto none = find_python(std::nullopt, env_of({{"PATH", "/nonexistent"}}));
    EXPECT_FALSE(none.found);
    EXPECT_NE(none.absent_reason.find("no Python found"), std::string::npos);
    // An active but broken environment is passed over aloud: the benchmark names it.
    auto broken = env_of({{"VIRTUAL_ENV", "/nonexistent"},
                          {"CONDA_PREFIX", (root / "conda").string()},
                          {"PATH", (root / "path").string()}});
    auto via_conda = find_python(std::nullopt, broken).found;
    ASSERT_TRUE(via_conda);
    EXPECT_EQ(via_conda->how, "$CONDA_PREFIX; $VIRTUAL_ENV=/nonexistent has no bin/python, so it was passed over");
    auto via_path = find_python(std::nullopt, env_of({{"VIRTUAL_ENV", "/tmp"}, {"PATH", (root / "path").string()}}));
    ASSERT_TRUE(via_path.found);
    EXPECT_EQ(via_path.found->how, "PATH; $VIRTUAL_ENV=/tmp has no bin/python, so it was passed over");
    try {
        find_python(std::string("/nonexistent/python"), all);
        ADD_FAILURE() << "a missing --python was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
    }
    fs::remove_all(root);
}

TEST(ScriptOutcome, EachWayAChildEndsIsNamed) {
    ScriptRun run;
    run.python = "python3";
    run.name = "train_bench.py";
    run.idle_timeout_s = 5;
    ChildOutcome c;
    c.end = ChildEnd::Hung;
    c.stderr_tail = {"loading", "NCCL WARN timeout"};
    ScriptOutcome hung = interpret(c, run);
    EXPECT_EQ(hung.failure, ScriptFailure::Hung);
    EXPECT_NE(hung.message.find("no progress for 5 s"), std::string::npos) << hung.message;
    EXPECT_NE(hung.message.find("NCCL WARN timeout"), std::string::npos) << hung.message;
    c.end = ChildEnd::Exited;
    c.exit_status = 1;
    EXPECT_EQ(interpret(c, run).failure, ScriptFailure::Crashed);
    c.result = "{not json";
    c.exit_status = 0;
    EXPECT_EQ(interpret(c, run).failure, ScriptFailure::Garbage);
    c.result = "[1, 2]";
    EXPECT_EQ(interpret(c, run).failure, ScriptFailure::Garbage);
    c.result = R"({"status": "ok"})";
    ScriptOutcome ok = interpret(c, run);
    EXPECT_EQ(ok.failure, ScriptFailure::None);
    EXPECT_EQ(ok.result["status"], "ok");
    c.end = ChildEnd::Signaled;
    c.signal = 9;
    EXPECT_EQ(interpret(c, run).failure, ScriptFailure::Crashed);
    c.end = ChildEnd::Stopped;
    EXPECT_EQ(interpret(c, run).failure, ScriptFailure::Interrupted);
}
