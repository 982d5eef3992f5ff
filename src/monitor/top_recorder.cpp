#include "monitor/top_recorder.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "monitor/top_output.hpp"

namespace gpuvet {

TopRecorder::TopRecorder(const std::string& path, LogFormat format, const std::string& header_json)
    : path_(path), format_(format) {
    int fd = open_output_stream(path, "--log");
    file_ = ::fdopen(fd, "w");
    if (!file_) {
        ::close(fd);
        throw input_error(std::string("cannot write the log file '") + path + "': " + std::strerror(errno),
                          "give --log a path in a folder that exists and that you may write to");
    }
    try {
        put(format == LogFormat::Csv ? top_csv_header() : header_json + "\n");
    } catch (const Error& e) {
        std::fclose(file_);
        file_ = nullptr;
        // The header is the first write: a target that takes nothing is bad input (exit 2).
        throw input_error(e.what(), e.advice());
    }
}

TopRecorder::~TopRecorder() {
    if (file_) std::fclose(file_);
}

void TopRecorder::put(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
        throw runtime_error(std::string("writing the log file '") + path_ + "' failed: " + std::strerror(errno),
                            "free space on its disk or choose another --log path");
}

void TopRecorder::write(const TopFrame& f) {
    put(format_ == LogFormat::Csv ? top_csv_rows(f) : top_jsonl_rows(f));
    rows_ += static_cast<long>(f.gpus.size());
}

}  // namespace gpuvet
