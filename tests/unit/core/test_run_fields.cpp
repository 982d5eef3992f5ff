// The run's field tables (core/run_fields.hpp) against the types they describe and the files they
// drive: every field of a point or a summary has a row, and every row survives the record, the
// report's JSON and its reader with its own value. A field added without a row, or a row some
// writer or the reader skips, fails here by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>

#include "core/run_fields.hpp"
#include "monitor/run_record.hpp"
#include "monitor/run_summary.hpp"
#include "report/run_json.hpp"
#include "report/run_report_reader.hpp"

using namespace gpuvet;
using Json = nlohmann::ordered_json;

namespace {

// Converts to any member type: an aggregate takes as many of these as it has fields.
struct AnyField {
    template <class T>
    operator T() const;
};

template <class T, class... A>
constexpr std::size_t field_count() {
    if constexpr (requires { T{A{}..., AnyField{}}; }) return field_count<T, A..., AnyField>();
    else return sizeof...(A);
}

template <class Table>
std::size_t rows_with_known(const Table& t) {
    std::size_t n = 0;
    for (const auto& f : t) n += f.known != nullptr;
    return n;
}

template <class Table>
std::size_t window_rows(const Table& t) {
    std::size_t n = 0;
    for (const auto& f : t) n += f.window != nullptr;
    return n;
}

// Row i's distinct value, in the field's type; a flag is set, the origins cycle through the three.
template <class P, class S>
void set_distinct(P& p, const PointSignal<P, S>& f, int i) {
    if (f.known) p.*f.known = true;
    std::visit(
        [&](auto m) {
            using T = std::remove_cvref_t<decltype(p.*m)>;
            if constexpr (std::is_same_v<T, double>) p.*m = 1000 + i + 0.25;
            else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::optional<int>>) p.*m = 100 + i;
            else if constexpr (std::is_same_v<T, bool>) p.*m = true;
            else if constexpr (std::is_same_v<T, std::uint64_t>) p.*m = 0xA000u + std::uint64_t(i);
            else p.*m = static_cast<TickOrigin>(1 + i % 3);
        },
        f.point);
}

// The field as the record must hold it.
template <class P, class S>
Json expected_record(const P& p, const PointSignal<P, S>& f) {
    return std::visit(
        [&](auto m) -> Json {
            using T = std::remove_cvref_t<decltype(p.*m)>;
            if constexpr (std::is_same_v<T, TickOrigin>) {
                const char* words[] = {"", "point read", "interval mean", "counter difference"};
                return words[static_cast<int>(p.*m)];
            } else if constexpr (std::is_same_v<T, std::optional<int>>) {
                return p.*m ? Json(*(p.*m)) : Json(nullptr);
            } else {
                return p.*m;
            }
        },
        f.point);
}

template <class Table>
std::set<std::string> keys(const Table& t) {
    std::set<std::string> k;
    for (const auto& f : t) k.insert(f.key);
    return k;
}

RunPoint every_field_set(int gpus) {
    RunPoint p;
    p.t_s = 3;
    int i = 0;
    for (const HostSignal& f : kHostSignals) set_distinct(p.host, f, i++);
    for (int g = 0; g < gpus; ++g) {
        GpuPoint x;
        for (const GpuSignal& f : kGpuSignals) set_distinct(x, f, i++);
        p.gpus.push_back(x);
    }
    return p;
}

std::vector<Json> record_lines(const RunPoint& p) {
    std::string path =
        (std::filesystem::temp_directory_path() / ("gpuvet-run-fields-" + std::to_string(::getpid()) + ".jsonl"))
            .string();
    {
        RunRecorder rec(path);
        rec.header({0}, 1.0, {"train.py"});
        rec.write(p);
    }
    std::vector<Json> lines;
    std::ifstream in(path);
    for (std::string l; std::getline(in, l);) lines.push_back(Json::parse(l));
    std::filesystem::remove(path);
    return lines;
}

// Each statistic of row i distinct from every other figure of the summary.
Stat distinct_stat(int i) {
    return Stat{10.0 * i + 0.1, 10.0 * i + 0.2, 10.0 * i + 0.3, 10.0 * i + 0.4, 10.0 * i + 0.5};
}

template <class S, std::size_t N>
void set_figures(S& s, const std::array<SummaryFigure<S>, N>& table, int& i) {
    for (const SummaryFigure<S>& f : table)
        std::visit(
            [&](auto m) {
                using T = std::remove_cvref_t<decltype(s.*m)>;
                if constexpr (std::is_same_v<T, bool>) s.*m = true;
                else s.*m = static_cast<T>(500 + i);
                ++i;
            },
            f.member);
}

template <class S, std::size_t N>
void expect_figures(const S& got, const S& want, const std::array<SummaryFigure<S>, N>& table) {
    for (const SummaryFigure<S>& f : table)
        std::visit([&](auto m) { EXPECT_EQ(got.*m, want.*m) << f.key << " did not survive the report"; }, f.member);
}

template <class P, class S, std::size_t N>
void expect_stats(const S& got, const S& want, const std::array<PointSignal<P, S>, N>& table) {
    for (const auto& f : table) {
        if (!f.window) continue;
        const Stat &a = got.*f.window, &b = want.*f.window;
        EXPECT_EQ(a.mean, b.mean) << f.key << ".mean did not survive the report";
        EXPECT_EQ(a.p5, b.p5) << f.key << ".p5";
        EXPECT_EQ(a.p50, b.p50) << f.key << ".p50";
        EXPECT_EQ(a.p95, b.p95) << f.key << ".p95";
        EXPECT_EQ(a.max, b.max) << f.key << ".max";
    }
}

}  // namespace

TEST(RunFields, EveryPointFieldHasARow) {
    // A field added to a point without a row here would be recorded, summarized and charted by
    // nobody: the count of the aggregate's fields catches it.
    EXPECT_EQ(field_count<GpuPoint>(), kGpuSignals.size() + rows_with_known(kGpuSignals));
    EXPECT_EQ(field_count<HostPoint>(), kHostSignals.size() + rows_with_known(kHostSignals));
    EXPECT_EQ(keys(kGpuSignals).size(), kGpuSignals.size());
    EXPECT_EQ(keys(kHostSignals).size(), kHostSignals.size());
}

TEST(RunFields, EverySummaryFieldHasARow) {
    // GpuRunSummary: the GPU's facts (written by hand), the window statistics and the figures.
    EXPECT_EQ(field_count<GpuRunSummary>(), 1 + window_rows(kGpuSignals) + kGpuFigures.size());
    EXPECT_EQ(field_count<HostRunSummary>(), window_rows(kHostSignals) + kHostFigures.size());
}

TEST(RunFields, StatisticsAndChartsAreOfNumbers) {
    for (const GpuSignal& f : kGpuSignals)
        if (f.window || f.series_unit) {
            EXPECT_TRUE(std::holds_alternative<double GpuPoint::*>(f.point)) << f.key;
        }
    for (const HostSignal& f : kHostSignals)
        if (f.window || f.series_unit) {
            EXPECT_TRUE(std::holds_alternative<double HostPoint::*>(f.point)) << f.key;
        }
}

TEST(RunFields, EveryRecordedFieldRoundTripsThroughTheRecord) {
    RunPoint p = every_field_set(2);
    std::vector<Json> lines = record_lines(p);
    ASSERT_EQ(lines.size(), 2u);
    const Json& units = lines[0]["units"];
    const Json& row = lines[1];
    for (const HostSignal& f : kHostSignals) {
        ASSERT_EQ(row["host"].contains(f.key), f.record_unit != nullptr) << "host." << f.key;
        if (!f.record_unit) continue;
        EXPECT_EQ(row["host"][f.key], expected_record(p.host, f)) << "host." << f.key;
        if (*f.record_unit) {
            EXPECT_EQ(units[std::string("host.") + f.key], f.record_unit);
        }
    }
    ASSERT_EQ(row["gpus"].size(), 2u);
    for (std::size_t g = 0; g < 2; ++g)
        for (const GpuSignal& f : kGpuSignals) {
            ASSERT_EQ(row["gpus"][g].contains(f.key), f.record_unit != nullptr) << "gpus[]." << f.key;
            if (!f.record_unit) continue;
            EXPECT_EQ(row["gpus"][g][f.key], expected_record(p.gpus[g], f)) << "gpus[]." << f.key;
            if (*f.record_unit) {
                EXPECT_EQ(units[std::string("gpus[].") + f.key], f.record_unit);
            }
        }
    // A field the point does not know is null, not its stale value.
    p.gpus[0].reasons_known = false;
    p.gpus[0].power_w = kUnmeasured;
    p.gpus[0].job_processes.reset();
    p.gpus[0].utilization_origin = TickOrigin::kUnmeasured;
    std::vector<Json> again_lines = record_lines(p);
    const Json& again = again_lines[1]["gpus"][0];
    EXPECT_TRUE(again["clock_event_reasons"].is_null());
    EXPECT_TRUE(again["power_w"].is_null());
    EXPECT_TRUE(again["job_processes"].is_null());
    EXPECT_TRUE(again["utilization_origin"].is_null());
}

TEST(RunFields, TheWindowSummarizesEveryStatisticRow) {
    RunPoint p = every_field_set(1);
    std::vector<RunPoint> pts{p};
    WindowView v = window_view(pts, 1.0, steady_window(pts, 1.0, 1.0));
    GpuRunSummary g = summarize_gpu(pts, v, 0, RunGpuFacts{});
    HostRunSummary h = summarize_host(pts, v, 4);
    for (const GpuSignal& f : kGpuSignals)
        if (f.window) {
            EXPECT_EQ((g.*f.window).mean, p.gpus[0].*std::get<double GpuPoint::*>(f.point)) << f.key;
        }
    for (const HostSignal& f : kHostSignals)
        if (f.window) {
            EXPECT_EQ((h.*f.window).mean, p.host.*std::get<double HostPoint::*>(f.point)) << f.key;
        }
}

TEST(RunFields, EverySummaryFieldRoundTripsThroughTheReport) {
    RunResult r;
    r.command = {"train.py"};
    GpuRunSummary g;
    g.facts.index = 3;
    g.facts.name = "NVIDIA H100 80GB HBM3";
    g.facts.mig = true;
    g.facts.nvlink_active = 18;
    g.facts.memory_total_bytes = 85899345920.0;
    g.facts.sm_clock_max_mhz = 1980;
    int i = 1;
    for (const GpuSignal& f : kGpuSignals)
        if (f.window) g.*f.window = distinct_stat(i++);
    set_figures(g, kGpuFigures, i);
    r.gpus.push_back(g);
    for (const HostSignal& f : kHostSignals)
        if (f.window) r.host.*f.window = distinct_stat(i++);
    set_figures(r.host, kHostFigures, i);

    Envelope env;
    env.command = "run";
    RunResult back = read_run_report(render_run_json(env, r), "gpuvet-run.json");
    ASSERT_EQ(back.gpus.size(), 1u);
    const GpuRunSummary& b = back.gpus[0];
    EXPECT_EQ(b.facts.index, g.facts.index);
    EXPECT_EQ(b.facts.name, g.facts.name);
    EXPECT_EQ(b.facts.mig, g.facts.mig);
    EXPECT_EQ(b.facts.nvlink_active.value, g.facts.nvlink_active.value);
    EXPECT_EQ(b.facts.memory_total_bytes, g.facts.memory_total_bytes);
    EXPECT_EQ(b.facts.sm_clock_max_mhz, g.facts.sm_clock_max_mhz);
    expect_stats(b, g, kGpuSignals);
    expect_figures(b, g, kGpuFigures);
    expect_stats(back.host, r.host, kHostSignals);
    expect_figures(back.host, r.host, kHostFigures);
}

TEST(RunFields, UnmeasuredSummaryFiguresReadBackUnmeasured) {
    RunResult r;
    r.gpus.push_back(GpuRunSummary{});
    Envelope env;
    env.command = "run";
    std::string text = render_run_json(env, r);
    Json j = Json::parse(text);
    EXPECT_TRUE(j["run"]["gpus"][0]["job_processes_max"].is_null());
    EXPECT_TRUE(j["run"]["gpus"][0]["power_cap_fraction"].is_null());
    RunResult back = read_run_report(text, "gpuvet-run.json");
    EXPECT_FALSE(back.gpus[0].job_processes_max.has_value());
    EXPECT_FALSE(measured(back.gpus[0].power_cap_fraction));
    EXPECT_FALSE(back.gpus[0].utilization_percent.measured());
}

TEST(RunFields, EveryChartedRowRoundTripsThroughTheSeries) {
    RunResult r;
    r.gpu_indexes = {5};
    RunPoint a = every_field_set(1), b = every_field_set(1);
    b.t_s = a.t_s + 1;
    for (const GpuSignal& f : kGpuSignals)
        if (auto d = std::get_if<double GpuPoint::*>(&f.point)) b.gpus[0].*(*d) += 7;
    for (const HostSignal& f : kHostSignals)
        if (auto d = std::get_if<double HostPoint::*>(&f.point)) b.host.*(*d) += 7;
    r.timeline = {a, b};
    Envelope env;
    env.command = "run";
    RunReportDoc doc = read_run_report_doc(render_run_json(env, r), "gpuvet-run.json");
    auto find = [&](const std::string& key, std::optional<int> gpu) -> const TimeSeries* {
        for (const TimeSeries& s : doc.series)
            if (s.key == key && s.gpu == gpu) return &s;
        return nullptr;
    };
    std::size_t charted = 0;
    for (const HostSignal& f : kHostSignals) {
        if (!f.series_unit) continue;
        ++charted;
        const TimeSeries* s = find(f.chart_key(), std::nullopt);
        ASSERT_NE(s, nullptr) << f.chart_key();
        EXPECT_EQ(s->unit, f.series_unit);
        double HostPoint::*d = std::get<double HostPoint::*>(f.point);
        EXPECT_EQ(s->values, (std::vector<double>{a.host.*d, b.host.*d})) << f.chart_key();
        EXPECT_EQ(s->t_s, (std::vector<double>{a.t_s, b.t_s}));
    }
    for (const GpuSignal& f : kGpuSignals) {
        if (!f.series_unit) continue;
        ++charted;
        const TimeSeries* s = find(f.chart_key(), 5);
        ASSERT_NE(s, nullptr) << f.chart_key();
        EXPECT_EQ(s->unit, f.series_unit);
        double GpuPoint::*d = std::get<double GpuPoint::*>(f.point);
        EXPECT_EQ(s->values, (std::vector<double>{a.gpus[0].*d, b.gpus[0].*d})) << f.chart_key();
    }
    EXPECT_EQ(doc.series.size(), charted);
}
