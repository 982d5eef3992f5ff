// `gpuvet top --log FILE`: a recorder like `nvidia-smi dmon`. The file is opened (and its header
// written) before the first sample, so an unwritable path fails at once; each tick's rows are
// written and flushed before the next tick, so a recording cut short keeps every finished tick.
#pragma once
#include <cstdio>
#include <string>

#include "monitor/top_model.hpp"

namespace gpuvet {

enum class LogFormat { Csv, Jsonl };

class TopRecorder {
public:
    // Throws an input error (exit 2) naming the path and the OS reason when it cannot be written.
    // `header_json`: the JSON Lines header record (envelope and fields), one line.
    TopRecorder(const std::string& path, LogFormat format, const std::string& header_json);
    ~TopRecorder();
    TopRecorder(const TopRecorder&) = delete;
    TopRecorder& operator=(const TopRecorder&) = delete;
    // Appends one row per GPU and flushes; throws a runtime error when the write fails (disk full).
    void write(const TopFrame& f);
    long rows() const { return rows_; }

private:
    void put(const std::string& text);
    std::FILE* file_ = nullptr;
    std::string path_;
    LogFormat format_;
    long rows_ = 0;
};

}  // namespace gpuvet
