#include "monitor/run_record.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <variant>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/run_fields.hpp"

namespace gpuvet {

namespace {

using Json = nlohmann::ordered_json;

Json value(double v) { return measured(v) && std::isfinite(v) ? Json(v) : Json(nullptr); }

// How a figure was obtained, in the record's words; null when it was not measured.
Json origin(TickOrigin o) {
    switch (o) {
        case TickOrigin::kIntervalMean: return "interval mean";
        case TickOrigin::kCounterDifference: return "counter difference";
        case TickOrigin::kPointRead: return "point read";
        case TickOrigin::kUnmeasured: break;
    }
    return nullptr;
}

// One field of a point as the record writes it: null when not measured or unknown.
template <class P, class S>
Json field(const P& p, const PointSignal<P, S>& f) {
    if (f.known && !(p.*f.known)) return nullptr;
    return std::visit(
        [&](auto m) -> Json {
            using T = std::remove_cvref_t<decltype(p.*m)>;
            if constexpr (std::is_same_v<T, double>) return value(p.*m);
            else if constexpr (std::is_same_v<T, std::optional<int>>) return p.*m ? Json(*(p.*m)) : Json(nullptr);
            else if constexpr (std::is_same_v<T, TickOrigin>) return origin(p.*m);
            else return Json(p.*m);
        },
        f.point);
}

template <class P, class S, std::size_t N>
Json fields(const P& p, const std::array<PointSignal<P, S>, N>& table) {
    Json j = Json::object();
    for (const auto& f : table)
        if (f.record_unit) j[f.key] = field(p, f);
    return j;
}

}  // namespace

RunRecorder::RunRecorder(const std::string& path) : path_(path) {
    int fd = open_output_stream(path, "--record");  // close-on-exec: the job never inherits it
    f_ = ::fdopen(fd, "w");
    if (!f_) {
        ::close(fd);
        throw input_error("--record " + path + ": cannot write there (" + std::strerror(errno) + ")",
                          "choose a file in a folder you can write to");
    }
}

RunRecorder::~RunRecorder() {
    if (f_) std::fclose(f_);
}

void RunRecorder::line(const std::string& text) {
    if (!f_ || !failure_.empty()) return;
    if (std::fputs(text.c_str(), f_) < 0 || std::fputc('\n', f_) < 0 || std::fflush(f_) != 0)
        failure_ = std::string("writing failed: ") + std::strerror(errno);
}

void RunRecorder::header(const std::vector<int>& gpus, double interval_s, const std::vector<std::string>& command) {
    Json h;
    h["record"] = "gpuvet-run-timeline";
    h["format_version"] = kRecordFormatVersion;
    h["interval_s"] = interval_s;
    h["command"] = command;
    h["gpus"] = gpus;
    Json units = {{"t_s", "s since the command started"}};
    for (const HostSignal& f : kHostSignals)
        if (f.record_unit && *f.record_unit) units[std::string("host.") + f.key] = f.record_unit;
    for (const GpuSignal& f : kGpuSignals)
        if (f.record_unit && *f.record_unit) units[std::string("gpus[].") + f.key] = f.record_unit;
    h["units"] = units;
    line(h.dump());
    // The header is written before the job starts: a target that takes nothing (/dev/full, a full
    // disk) refuses the run instead of losing its record.
    if (!failure_.empty())
        throw input_error("--record " + path_ + ": " + failure_, "choose a file on a disk with free space");
}

void RunRecorder::write(const RunPoint& p) {
    Json j;
    j["t_s"] = p.t_s;
    j["host"] = fields(p.host, kHostSignals);
    j["gpus"] = Json::array();
    for (const GpuPoint& g : p.gpus) j["gpus"].push_back(fields(g, kGpuSignals));
    line(j.dump());
}

}  // namespace gpuvet
