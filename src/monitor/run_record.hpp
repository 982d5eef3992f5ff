// `gpuvet run --record FILE`: the timeline as JSON Lines, one object a tick, written and flushed
// as the run goes (a crash keeps what was recorded). The first line is a header naming every
// field with its unit; a value not measured is null (its reason is in the run report).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "core/run_timeline.hpp"

namespace gpuvet {

inline constexpr int kRecordFormatVersion = 1;

class RunRecorder {
public:
    // Opens (truncates) the file; an unwritable path is an input error naming it, before the job starts.
    explicit RunRecorder(const std::string& path);
    ~RunRecorder();
    RunRecorder(const RunRecorder&) = delete;
    RunRecorder& operator=(const RunRecorder&) = delete;

    void header(const std::vector<int>& gpus, double interval_s, const std::vector<std::string>& command);
    void write(const RunPoint& p);
    const std::string& path() const { return path_; }
    // A write failed (disk full): the run goes on, the report says the record is incomplete.
    const std::string& failure() const { return failure_; }

private:
    void line(const std::string& text);
    std::string path_;
    std::FILE* f_ = nullptr;
    std::string failure_;
};

}  // namespace gpuvet
