#include "monitor/top_screen.hpp"

#include <langinfo.h>
#include <unistd.h>

#include <algorithm>
#include <clocale>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "monitor/clock_words.hpp"
#include "monitor/process_rows.hpp"
#include "monitor/top_fields.hpp"
#include "monitor/top_widgets.hpp"
#include "core/units.hpp"

// Last: curses.h defines macros (timeout, clear, erase, move...) that would rewrite names above.
#include <curses.h>

namespace gpuvet {

namespace {

enum Pair : short { kGood = 1, kWarn, kBad, kAccent, kHeader };

attr_t tone_attr(Tone t) {
    switch (t) {
        case Tone::Good: return COLOR_PAIR(kGood);
        case Tone::Warn: return COLOR_PAIR(kWarn) | A_BOLD;
        case Tone::Bad: return COLOR_PAIR(kBad) | A_BOLD;
        case Tone::Dim: return A_DIM;
        case Tone::Normal: break;
    }
    return A_NORMAL;
}

// The first `cols` characters of UTF-8 text (every character the monitor prints is one column).
std::string clip(const std::string& s, int cols) {
    std::size_t i = 0;
    int n = 0;
    while (i < s.size() && n < cols) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        ++n;
    }
    return s.substr(0, std::min(i, s.size()));
}
int columns_of(const std::string& s) {
    int n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// A line drawn left to right in segments of their own colour, clipped at the screen's edge.
class Line {
public:
    Line(int y, int width) : y_(y), width_(width) { ::move(y_, 0); }
    Line& put(const std::string& s, attr_t a = A_NORMAL) {
        int room = width_ - x_;
        if (room <= 0) return *this;
        std::string c = clip(s, room);
        attron(a);
        mvaddstr(y_, x_, c.c_str());
        attroff(a);
        x_ += columns_of(c);
        return *this;
    }
    int x() const { return x_; }

private:
    int y_, width_, x_ = 0;
};

FieldValue value(const TopGpu& g, std::string_view key) { return top_field(key).get(GpuView{*g.gpu, g.reading}); }
std::string shown(const TopGpu& g, std::string_view key) {
    std::string s = field_text(top_field(key), value(g, key));
    return s.empty() ? "N/A" : s;
}

// " (point read)" after a figure read at the tick's instant rather than over the interval: a job
// alternating with the refresh can read busier or idler than it is.
std::string point_mark(const TopGpu& g, std::string_view origin_key) {
    FieldValue o = value(g, origin_key);
    // The field table writes the backend's name for the source; compared with that same name.
    const std::string point = figure_source_name(FigureSource::kPointRead);
    return o.text && *o.text == point ? " (" + point + ")" : "";
}

// " power 35%" / " thermal 20%": the share of the time since the previous tick the clocks were
// held down by that limiter (violation counters), when not 0; a dip between two ticks counts.
std::string held_text(const TopGpu& g, std::string_view key, const char* name) {
    FieldValue x = value(g, key);
    return x.number && *x.number >= 0.5 ? std::string(" ") + name + " " + shown(g, key) + "%" : "";
}

std::string gib(const Fact<std::uint64_t>& b) { return b ? format_fixed(static_cast<double>(*b) / kGiB, 1) : "?"; }

void draw_header(const TopFrame& f, const ViewState& v, int w) {
    Line l(0, w);
    l.put(" gpuvet top ", COLOR_PAIR(kHeader) | A_BOLD).put(std::string(" ") + f.host_name, A_BOLD);
    l.put(std::string("  driver ") + f.system.driver_version.value_or("N/A"));
    if (f.system.cuda_driver_version) l.put(std::string("  CUDA ") + cuda_version_text(*f.system.cuda_driver_version));
    const Fact<double>& cpu = f.host.cpu_busy_percent;
    l.put("  CPU ").put(std::string("[") + fill_bar(cpu, 10) + "]", tone_attr(load_tone(cpu)));
    l.put(cpu ? std::string(" ") + format_fixed(*cpu, 0) + "%" : " N/A");
    Fact<double> ram =
        f.host.memory_used_bytes && f.host.memory_total_bytes && *f.host.memory_total_bytes > 0
            ? Fact<double>(100.0 * double(*f.host.memory_used_bytes) / double(*f.host.memory_total_bytes))
            : Fact<double>::absent("unread");
    l.put("  RAM ").put(std::string("[") + fill_bar(ram, 10) + "]", tone_attr(load_tone(ram)));
    l.put(std::string(" ") + gib(f.host.memory_used_bytes) + "/" + gib(f.host.memory_total_bytes) + " GiB");
    if (f.host.load)
        l.put(std::string("  load ") + format_fixed(f.host.load->one, 2) + " " + format_fixed(f.host.load->five, 2) +
              " " + format_fixed(f.host.load->fifteen, 2));

    Line s(1, w);
    attron(A_REVERSE);
    mvhline(1, 0, ' ', w);
    attroff(A_REVERSE);
    if (!v.stale.empty()) s.put(" " + v.stale + " ", COLOR_PAIR(kBad) | A_BOLD);
    s.put(std::string(" every ") + format_number(v.interval_s) + " s", A_REVERSE)
        .put(std::string("  sort ") + sort_name(v.sort) + (v.reverse ? " (reversed)" : ""), A_REVERSE)
        .put(v.only_gpu ? std::string("  showing GPU ") + std::to_string(*v.only_gpu) : "  all GPUs", A_REVERSE)
        .put("   q quit  s sort  f/0-9 filter  h history  +/- interval  ? help ", A_REVERSE);
}

int bar_width(int w) { return std::clamp((w - 70) / 3, 5, 30); }

// One GPU: 1 line (compact), 2 (numbers and bars), or full (GPM, hints, history).
int draw_gpu(const TopGpu& g, const ViewState& v, int y, int w, int level, bool unicode) {
    const DeviceFacts& facts = g.gpu->facts;
    const DeviceSample& s = g.reading.sample;
    Line l1(y, w);
    l1.put(std::string("[") + std::to_string(g.gpu->index) + "] ", COLOR_PAIR(kAccent) | A_BOLD)
        .put(facts.name.value_or("GPU"), A_BOLD);
    std::string state = shown(g, "state");
    if (state != "ok") {
        FieldValue u = value(g, "utilization.gpu");
        l1.put(state == "lost" ? "  LOST: " : "  UNOPENED: ", tone_attr(Tone::Bad))
            .put(u.absent_reason, tone_attr(Tone::Bad));
        return 1;
    }
    if (facts.mig_enabled.value_or(false)) l1.put("  MIG on", tone_attr(Tone::Warn));
    l1.put("  ").put(shown(g, "temperature.gpu") + "°C",
                     tone_attr(temperature_tone(s.temperature_c, facts.temperature_slowdown_c)));
    l1.put(" mem ").put(shown(g, "temperature.memory") + "°C",
                        tone_attr(temperature_tone(s.temperature_memory_c, facts.temperature_memory_max_c)));
    l1.put(std::string("  SM ") + shown(g, "clocks.sm") + point_mark(g, "clocks.sm.origin") + " mem " +
           shown(g, "clocks.mem") + " MHz");
    l1.put(std::string("  PCIe Gen") + shown(g, "pcie.link.gen.current") + " x" + shown(g, "pcie.link.width.current") +
           " rx/tx " + shown(g, "pcie.rx") + "/" + shown(g, "pcie.tx") + " MB/s");
    if (value(g, "nvlink.rx").present() || value(g, "nvlink.tx").present())
        l1.put(std::string("  NVLink rx/tx ") + shown(g, "nvlink.rx") + "/" + shown(g, "nvlink.tx") + " MB/s");
    if (level < 2) {
        l1.put(std::string("  ") + shown(g, "utilization.gpu") + "%" + point_mark(g, "utilization.origin") + "  " +
               shown(g, "memory.used") + "/" + shown(g, "memory.total") + " MiB  " + shown(g, "power.draw") + "/" +
               shown(g, "power.limit") + " W" + point_mark(g, "power.origin"));
        return 1;
    }
    const int bw = bar_width(w);
    Line l2(y + 1, w);
    const Fact<double>& util = g.utilization_percent.empty() ? Fact<double>() : g.utilization_percent.back();
    const Fact<double>& mem = g.memory_used_percent.empty() ? Fact<double>() : g.memory_used_percent.back();
    const Fact<double>& pwr = g.power_percent_of_limit.empty() ? Fact<double>() : g.power_percent_of_limit.back();
    l2.put("    UTIL ")
        .put(std::string("[") + fill_bar(util, bw) + "]", tone_attr(load_tone(util)))
        .put(std::string(" ") + shown(g, "utilization.gpu") + "%" + point_mark(g, "utilization.origin"));
    l2.put("  MEM ")
        .put(std::string("[") + fill_bar(mem, bw) + "]", tone_attr(load_tone(mem)))
        .put(std::string(" ") + shown(g, "memory.used") + "/" + shown(g, "memory.total") + " MiB");
    l2.put("  PWR ")
        .put(std::string("[") + fill_bar(pwr, bw) + "]", tone_attr(load_tone(pwr)))
        .put(std::string(" ") + shown(g, "power.draw") + "/" + shown(g, "power.limit") + " W" +
             point_mark(g, "power.origin"));
    if (s.clock_event_reasons) {
        std::uint64_t m = *s.clock_event_reasons;
        l2.put("  clocks: ")
            .put(clock_reasons_text(m), tone_attr(clock_reasons_alarming(m) ? Tone::Bad : Tone::Normal));
    }
    std::string power = held_text(g, "throttled.power", "power"),
                thermal = held_text(g, "throttled.thermal", "thermal");
    if (!power.empty() || !thermal.empty()) l2.put("  held:").put(power).put(thermal, tone_attr(Tone::Warn));
    int lines = 2;
    if (level >= 3) {
        Line l3(y + lines++, w);
        FieldValue sm = value(g, "gpm.sm_active");
        if (sm.present())
            l3.put(std::string("    GPM  SM active ") + shown(g, "gpm.sm_active") + "%  occupancy " +
                   shown(g, "gpm.sm_occupancy") + "%  tensor " + shown(g, "gpm.tensor_active") + "%  DRAM bw " +
                   shown(g, "gpm.dram_bandwidth") + "%");
        else l3.put(std::string("    GPM  ") + sm.absent_reason, A_DIM);
    }
    // Hints stay in the middle layout too: they are what the numbers alone do not say.
    for (const auto& h : g.hints) {
        Tone t = h.level == HintLevel::Alert ? Tone::Bad : h.level == HintLevel::Warn ? Tone::Warn : Tone::Normal;
        Line lh(y + lines++, w);
        lh.put(std::string("    ") + (h.level == HintLevel::Info ? "· " : "! ") + h.text, tone_attr(t));
    }
    if (level >= 3 && v.history) {
        Line lh(y + lines++, w);
        int sw = std::max(10, (w - 24) / 2);
        lh.put("    util ").put(sparkline(g.utilization_percent, sw, unicode), COLOR_PAIR(kGood));
        lh.put("  mem ").put(sparkline(g.memory_used_percent, sw, unicode), COLOR_PAIR(kAccent));
    }
    return lines;
}

// Lines a GPU takes at a layout level: 3 full (GPM, hints, history), 2 numbers, bars and hints, 1 compact.
int lines_at(const TopGpu& g, const ViewState& v, int level) {
    if (g.reading.lost || !g.gpu->unopened_reason.empty() || level == 1) return 1;
    int hints = static_cast<int>(g.hints.size());
    return level == 2 ? 2 + hints : 3 + hints + (v.history ? 1 : 0);
}

void draw_processes(const TopFrame& f, const ViewState& v, int y, int w, int h) {
    if (h < 2) return;
    Line note(y, w);
    note.put(std::string(" ") + std::string(kHostPidNote), A_DIM);
    char head[128];
    std::snprintf(head, sizeof head, " %3s %8s %-10s %9s %6s  %s", "GPU", "PID", "USER", "GPU MEM", "CPU%", "COMMAND");
    attron(A_REVERSE);
    mvhline(y + 1, 0, ' ', w);
    attroff(A_REVERSE);
    Line hl(y + 1, w);
    hl.put(head, A_REVERSE);
    int row = y + 2;
    auto rows = view_processes(f.processes, v);
    if (!f.processes_absent_reason.empty() && row < y + h)
        Line(row++, w).put(std::string(" not read: ") + f.processes_absent_reason, A_DIM);
    if (rows.empty() && row < y + h) Line(row++, w).put(" no process is using the GPUs shown", A_DIM);
    for (const auto& p : rows) {
        if (row >= y + h) break;
        std::string mem = p.gpu_memory_bytes ? format_fixed(double(*p.gpu_memory_bytes) / kMiB, 0) + "MiB" : "N/A";
        std::string cpu = p.cpu_percent ? format_fixed(*p.cpu_percent, 1) : "N/A";
        char cells[96];
        std::snprintf(cells, sizeof cells, " %3d %8u %-10s %9s %6s  ", p.gpu, p.pid,
                      p.user.value_or("?").substr(0, 10).c_str(), mem.c_str(), cpu.c_str());
        Line(row++, w).put(cells).put(p.command ? *p.command : std::string("? ") + p.command.absent_reason,
                                      p.command ? A_NORMAL : A_DIM);
    }
}

void draw_help(int w, int h) {
    const auto& lines = top_key_help();
    int bw = std::min(w - 2, 64), bh = std::min(h - 2, static_cast<int>(lines.size()) + 4);
    int y0 = std::max(0, (h - bh) / 2), x0 = std::max(0, (w - bw) / 2);
    for (int y = 0; y < bh; ++y) {
        attron(A_REVERSE);
        mvhline(y0 + y, x0, ' ', bw);
        attroff(A_REVERSE);
    }
    attron(A_REVERSE | A_BOLD);
    mvaddnstr(y0 + 1, x0 + 2, "gpuvet top: keys", bw - 4);
    attroff(A_BOLD);
    for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) + 3 < bh; ++i)
        mvaddnstr(y0 + 3 + static_cast<int>(i), x0 + 2, lines[i].c_str(), bw - 4);
    attroff(A_REVERSE);
}

}  // namespace

TopScreen::TopScreen(bool color) {
    std::setlocale(LC_ALL, "");
    unicode_ = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    // xterm's "leave the alternate screen, show the cursor, reset colours" for the second signal.
    restore_ = std::make_unique<TerminalRestore>(STDOUT_FILENO, "\x1b[?1049l\x1b[?25h\x1b[0m\r\n");
    // newterm, not initscr: initscr ends the process (exit 1) on a terminal type it does not know.
    const char* term = std::getenv("TERM");
    const std::string term_words = std::string("TERM=") + (term && *term ? term : "(empty)");
    screen_ = newterm(nullptr, stdout, stdin);
    if (!screen_)
        throw usage_error(term_words + " is not a terminal type this machine knows: the full screen cannot be drawn",
                          "set TERM to your terminal's type (e.g. TERM=xterm-256color), or use --once or --log FILE");
    const char* cup = tigetstr(const_cast<char*>("cup"));
    if (!cup || cup == reinterpret_cast<const char*>(-1)) {
        endwin();
        delscreen(static_cast<SCREEN*>(screen_));
        screen_ = nullptr;
        throw usage_error(term_words + " cannot move the cursor: the full screen cannot be drawn",
                          "use --once for one snapshot or --log FILE for a recording, or a terminal that can");
    }
    cbreak();  // keys at once; Ctrl-C still raises SIGINT (the stop flag)
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    if (color && has_colors()) {
        start_color();
        use_default_colors();
        init_pair(kGood, COLOR_GREEN, -1);
        init_pair(kWarn, COLOR_YELLOW, -1);
        init_pair(kBad, COLOR_RED, -1);
        init_pair(kAccent, COLOR_CYAN, -1);
        init_pair(kHeader, COLOR_BLACK, COLOR_GREEN);
    }
}

TopScreen::~TopScreen() {
    endwin();
    if (screen_) delscreen(static_cast<SCREEN*>(screen_));
    restore_.reset();
}

int TopScreen::resize_key() { return KEY_RESIZE; }

int TopScreen::key_until(std::chrono::steady_clock::time_point until) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    ::timeout(static_cast<int>(std::clamp<long long>(ms, 0, 50)));
    int k = getch();
    return k == ERR ? -1 : k;
}

void TopScreen::draw(const TopFrame& f, const ViewState& v) {
    erase();
    const int w = COLS, h = LINES;
    if (w < kTopMinColumns || h < kTopMinLines) {
        std::string msg = std::string("terminal too small (") + std::to_string(w) + "x" + std::to_string(h) +
                          "): make it at least " + std::to_string(kTopMinColumns) + "x" + std::to_string(kTopMinLines);
        mvaddnstr(0, 0, msg.c_str(), w);
        refresh();
        return;
    }
    draw_header(f, v, w);
    std::vector<const TopGpu*> shown_gpus;
    for (const auto& g : f.gpus)
        if (!v.only_gpu || g.gpu->index == *v.only_gpu) shown_gpus.push_back(&g);
    // The densest layout that still leaves the process table a few lines.
    const int room = h - 2 - 4;
    int level = 3;
    for (; level > 1; --level) {
        int need = 0;
        for (const auto* g : shown_gpus) need += lines_at(*g, v, level);
        if (need <= room) break;
    }
    int y = 2;
    for (const auto* g : shown_gpus) {
        if (y >= h) break;
        y += draw_gpu(*g, v, y, w, level, unicode_);
    }
    draw_processes(f, v, y, w, h - y);
    if (v.help) draw_help(w, h);
    refresh();
}

}  // namespace gpuvet
