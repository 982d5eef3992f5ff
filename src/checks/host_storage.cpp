#include "checks/host_storage.hpp"

#include <cctype>

#include "core/context.hpp"
#include "core/strings.hpp"
#include "host/storage_bench.hpp"

namespace gpuvet {

std::vector<CheckResult> HostStorageCheck::run(CheckContext& ctx) {
    StorageOptions o;
    o.dir = settings_.data_dir;
    if (settings_.max_bytes) o.max_bytes = *settings_.max_bytes;
    o.rand_seconds = ctx.options.tier == Tier::Quick ? 1 : ctx.options.tier == Tier::Full ? 5 : 2;
    o.stop = ctx.stop;
    if (ctx.progress) ctx.progress->update("storage on " + o.dir.string());
    StorageResult s = run_storage_bench(o);

    CheckResult r;
    r.measurements.push_back(Measurement::textual("data_path", "Data path", o.dir.string()));
    r.measurements.push_back(Measurement::textual("filesystem", "Filesystem", s.fs_type));
    r.measurements.push_back(Measurement::number("free_bytes", "Free space", double(s.free_bytes), "bytes"));
    if (!s.skip_reason.empty()) {
        r.verdict = Verdict::Skip;
        r.summary = s.skip_reason + ".";
        r.summary[0] = char(std::toupper(static_cast<unsigned char>(r.summary[0])));
        r.details = s.notes;
        return {r};
    }
    r.measurements.push_back(Measurement::number("test_bytes", "Test file size", double(s.file_bytes), "bytes"));
    r.measurements.push_back(
        Measurement::textual("io_engine", "I/O engine", s.engine + (s.direct ? ", O_DIRECT" : ", buffered")));
    // The references describe the method actually used, and the fio command that repeats it.
    const bool uring = s.engine == "io_uring";
    const std::string mode = s.direct ? "O_DIRECT" : "buffered";
    auto fio = [&](const std::string& pattern, const std::string& bs, int depth) {
        std::string d = std::to_string(depth);
        return "fio --rw=" + pattern + " --bs=" + bs + " --direct=" + (s.direct ? "1" : "0") +
               (uring ? " --ioengine=io_uring --iodepth=" + d
                      : " --ioengine=psync --numjobs=" + d + " --group_reporting");
    };
    Reference seq;
    seq.source = "1 MiB blocks, " + std::to_string(o.seq_depth) + " in flight through " + s.engine + ", " + mode +
                 ", write timed through fdatasync; compare: " + fio("write|read", "1M", o.seq_depth) +
                 " (held against the GPUs' needs in host.balance)";
    Reference rnd;
    rnd.source = "4 KiB random reads, " + std::to_string(o.rand_depth) + " in flight through " + s.engine + ", " +
                 mode + "; compare: " + fio("randread", "4k", o.rand_depth);
    auto add = [&](const char* key, const char* label, const std::optional<double>& v, const char* unit,
                   const std::string& why, const Reference& ref) {
        if (v) r.measurements.push_back(Measurement::number(key, label, *v, unit).against(ref));
        else r.measurements.push_back(Measurement::absent(key, label, unit, why.empty() ? "not measured" : why));
    };
    add("seq_write_gbps", "Sequential write", s.seq_write_gbps, "GB/s", s.seq_absent, seq);
    add("seq_read_gbps", "Sequential read", s.seq_read_gbps, "GB/s", s.seq_absent, seq);
    add("rand_read_iops", "Random 4 KiB read", s.rand_read_iops, "IOPS", s.rand_absent, rnd);
    r.details = s.notes;
    if (!s.seq_write_gbps && !s.seq_read_gbps && !s.rand_read_iops) {
        r.verdict = Verdict::Skip;
        r.summary = "Storage not measured: " + (s.seq_absent.empty() ? s.rand_absent : s.seq_absent) + ".";
        return {r};
    }
    r.verdict = s.direct ? Verdict::Pass : Verdict::Warn;
    std::string sum = s.fs_type + ", " + format_bytes(double(s.free_bytes)) + " free";
    if (s.seq_read_gbps) sum += ", read " + format_number(*s.seq_read_gbps) + " GB/s";
    if (s.seq_write_gbps) sum += ", write " + format_number(*s.seq_write_gbps) + " GB/s";
    if (s.rand_read_iops) sum += ", " + format_number(*s.rand_read_iops / 1000) + "k random-read IOPS";
    if (!s.direct) sum += " (buffered: not the disk's speed)";
    r.summary = sum + ".";
    return {r};
}

}  // namespace gpuvet
