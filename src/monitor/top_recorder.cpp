#include "monitor/top_recorder.hpp"

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "monitor/top_output.hpp"

namespace gpuvet {

TopRecorder::TopRecorder(const std::string& path, LogFormat format, const std::string& header_json)
    : path_(path), format_(format) {
    file_ = std::fopen(path.c_str(), "w");
    if (!file_)
        throw input_error(std::string("cannot write the log file '") + path + "': " + std::strerror(errno),
                          "give --log a path in a folder that exists and that you may write to");
    put(format == LogFormat::Csv ? top_csv_header() : header_json + "\n");
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
