"""gpuvet run end to end: real child processes on this machine (CPU-bound workers, an O_DIRECT reader of a
large file, a sleeper, jobs that fail, fork and outlive their parent, ignore nothing), and the driver test
doubles for the GPU timelines, one scenario per GPU rule: each rule fires on its scenario and on no other
(the matrix), with the same real CPU-burning job on every scenario so only the GPU timeline differs.

The host verdicts here come from state sampling (processes in R or D), which holds on a 2-core machine
shared with other builds: a CPU-bound process is runnable whether or not it gets the CPU."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import harness
from harness import NO_DRIVER, main, run, slow

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
SCEN = os.path.join(TESTS, "fakes", "scenarios")
PY = sys.executable

BURNER = """
import multiprocessing as mp, sys, time
def burn(secs):
    end = time.time() + secs
    x = 0
    while time.time() < end:
        x += 1
    return x
if __name__ == "__main__":
    secs, n = float(sys.argv[1]), int(sys.argv[2])
    with mp.Pool(n) as p:
        p.map(burn, [secs] * n)
"""

# Reads the file again and again for `secs`, bypassing the page cache: O_DIRECT into an aligned buffer
# where the filesystem allows it, else posix_fadvise(DONTNEED) before each pass (no global cache drop).
READER = """
import mmap, os, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
end = time.time() + secs
try:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    direct = True
except OSError:
    fd = os.open(path, os.O_RDONLY)
    direct = False
buf = mmap.mmap(-1, 1 << 20)
while time.time() < end:
    if not direct:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.lseek(fd, 0, 0)
    while time.time() < end and os.readv(fd, [buf]) > 0:
        pass
"""

# Rules the GPU scenarios stand for; each must fire on its own scenario and on none of the others.
MATRIX = {
    "run_input_gaps": "B1",
    "run_power_cap": "F1",
    "run_thermal": "F2",
    "run_one_idle_of_8": "A4",
    "run_pcie_no_nvlink": "D1",
    "run_pcie_replays": "F4",
    "run_pcie_saturated": "D2",
}


def fake(name):
    return {
        "GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
        "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
        "GPUVET_FAKE_SCENARIO": os.path.join(SCEN, name + ".toml"),
    }


def script(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run_job(*cmd, env=NO_DRIVER, opts=(), timeout=120):
    """Runs gpuvet run with --report into a temp folder; returns (code, report, stderr, stdout)."""
    with tempfile.TemporaryDirectory() as d:
        code, out, err = run("run", "--interval", "0.2", "--report", d, *opts, "--", *cmd, env=env, timeout=timeout)
        path = os.path.join(d, "gpuvet-run.json")
        doc = json.load(open(path)) if os.path.exists(path) else None
        if doc is not None:
            assert os.path.exists(os.path.join(d, "gpuvet-run.txt"))
        return code, doc, err, out


def ids(doc):
    d = doc["run"]["diagnosis"]
    primary = d["primary"]["id"] if d["primary"] else None
    return primary, {f["id"] for f in d["others"]} | ({primary} if primary else set())


def test_cpu_bound_workers_on_the_host():
    with tempfile.TemporaryDirectory() as tmp:
        code, doc, err, _ = run_job(PY, script(tmp, "burn.py", BURNER), "2.5", "2")
    assert code == 0, err
    assert "No GPU was visible" in err, err
    primary, fired = ids(doc)
    assert primary == "H1", err
    assert not fired & {"H2", "H3"}, fired
    host = doc["run"]["host"]
    assert host["workers_max"] == 2, host
    assert host["workers_cpu_cores"]["mean"] > host["main_cpu_cores"]["mean"], host  # the workers burn, main waits
    assert doc["run"]["no_gpu_reason"], doc["run"]
    assert doc["run"]["diagnosis"]["seed_peak_reached"] is None
    assert "not judged" in err
    assert doc["command"] == "run" and doc["schema_version"] >= 3
    keys = {s["key"] for s in doc["series"]}
    assert "host_tree_cpu_cores" in keys and not any(s["gpu"] is not None for s in doc["series"]), keys


# Two workers that name themselves as PyTorch's DataLoader workers do (the kernel's comm).
NAMED_WORKERS = """
import multiprocessing as mp, time
def work(_):
    with open("/proc/self/comm", "w") as f:
        f.write("pt_data_worker")
    end = time.time() + 2.0
    while time.time() < end:
        pass
if __name__ == "__main__":
    ps = [mp.Process(target=work, args=(i,)) for i in range(2)]
    [p.start() for p in ps]
    [p.join() for p in ps]
"""


def test_dataloader_workers_are_recognised_by_name():
    with tempfile.TemporaryDirectory() as tmp:
        code, doc, err, _ = run_job(PY, script(tmp, "named.py", NAMED_WORKERS))
    assert code == 0, err
    host = doc["run"]["host"]
    assert host["named_workers_max"] == 2 and host["workers_max"] == 2, host
    roles = {p["comm"]: p["role"] for p in doc["run"]["processes"]}
    assert roles.get("pt_data_worker") == "worker", roles
    assert "named as PyTorch DataLoader workers" in err, err


def test_io_bound_reader_bypassing_the_page_cache():
    with tempfile.TemporaryDirectory(dir=os.environ.get("GPUVET_TEST_TMP", "/var/tmp")) as tmp:
        big = os.path.join(tmp, "data.bin")
        with open(big, "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(128):
                f.write(chunk)
        code, doc, err, _ = run_job(PY, script(tmp, "read.py", READER), big, "2.5")
    assert code == 0, err
    primary, fired = ids(doc)
    assert primary == "H2", err
    assert "H1" not in fired and "H3" not in fired, fired
    host = doc["run"]["host"]
    assert host["disk_read_bytes_per_s"]["mean"] > 1e6, host  # read_bytes: from storage, not the cache


def test_sleeping_job_is_mostly_waiting():
    code, doc, err, _ = run_job("sleep", "1.5")
    assert code == 0, err
    assert ids(doc)[0] == "H3", err
    assert doc["run"]["wall_s"] >= 1.4


def test_exit_status_passes_through():
    code, _, err, _ = run_job("sh", "-c", "exit 7")
    assert code == 7, err
    code, doc, err, _ = run_job("sh", "-c", "kill -TERM $$")
    assert code == 143, err  # 128 + SIGTERM, as a shell reports it
    assert doc["run"]["killed_by_signal"] == 15
    code, _, err, out = run_job("sh", "-c", "echo to-stdout; echo to-stderr >&2; false")
    assert code == 1
    assert out == "to-stdout\n", out  # the job's stdout is untouched; gpuvet writes to stderr
    assert "to-stderr" in err and "Verdict:" in err


def test_command_not_found_is_127():
    code, out, err = run("run", "--", "no-such-command-gpuvet-test", env=NO_DRIVER)
    assert code == 127, err
    assert "cannot run 'no-such-command-gpuvet-test': command not found" in err, err
    with tempfile.TemporaryDirectory() as tmp:
        plain = script(tmp, "notexec.sh", "echo hi\n")
        code, out, err = run("run", "--", plain, env=NO_DRIVER)
    assert code == 126, err
    assert "permission denied" in err, err


def test_no_command_after_dashes():
    code, out, err = run("run", "--", env=NO_DRIVER)
    assert code == 2, err
    assert "no command to run" in err and "gpuvet run -- python train.py" in err, err


def test_command_words_pass_through_in_order():
    # The job's own options and a `--` of its own reach it unchanged.
    code, out, err = run("run", "--tag", "x", "--", "sh", "-c", 'echo "$0|$1|$2"', "--tag", "--", env=NO_DRIVER)
    assert code == 0, err
    assert out == "--tag|--|\n", out
    # Without `--`, an option of the job is refused with the fix (exit 2), before anything runs.
    code, out, err = run("run", "python3", "-c", "print(1)", env=NO_DRIVER)
    assert code == 2, err
    assert "put the command after --" in err, err


def test_unwritable_record_refuses_before_starting():
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "ran")
        code, out, err = run("run", "--record", "/nonexistent-dir/t.jsonl", "--", "touch", marker, env=NO_DRIVER)
        assert code == 2, err
        assert "--record /nonexistent-dir/t.jsonl: cannot write there" in err, err
        assert not os.path.exists(marker)  # the command never started


def test_record_is_json_lines_with_units():
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "t.jsonl")
        code, doc, err, _ = run_job("sleep", "1", opts=("--record", rec))
        lines = [json.loads(l) for l in open(rec)]
    assert code == 0, err
    head, ticks = lines[0], lines[1:]
    assert head["record"] == "gpuvet-run-timeline" and head["units"]["host.tree_cpu_cores"].startswith("CPU cores")
    assert len(ticks) >= 4, len(ticks)
    assert all(b["t_s"] > a["t_s"] for a, b in zip(ticks, ticks[1:]))
    assert ticks[0]["host"]["tree_cpu_cores"] is None  # no interval yet: absent, not 0
    assert ticks[-1]["host"]["tree_cpu_cores"] is not None
    assert doc["run"]["record"] == rec


def test_job_that_forks_and_exits_is_waited_for():
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "child-done")
        t0 = time.monotonic()
        code, doc, err, _ = run_job("sh", "-c", f"(sleep 1.5; touch {marker}) & exit 0")
        took = time.monotonic() - t0
        assert os.path.exists(marker), err  # gpuvet returned only after the orphan finished
    assert code == 0, err
    assert took >= 1.4 and doc["run"]["wall_s"] >= 1.4, (took, doc["run"]["wall_s"])
    assert doc["run"]["main_exited_at_s"] < 1.0
    assert "remaining process" in err, err
    assert doc["run"]["orphans_reaped"] >= 1


def test_sigterm_is_forwarded_to_the_job():
    p = subprocess.Popen([harness_binary(), "run", "--", "sleep", "30"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, **NO_DRIVER})
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    harness.check_no_crash(["run"], p.returncode, err)
    assert p.returncode == 143, err  # the job died of the forwarded SIGTERM
    assert time.monotonic() - t0 < 5
    assert "stopped by signal 15" in err, err


def test_judge_maps_the_verdict_to_the_exit_code():
    code, _, err, _ = run_job("sleep", "0.5", opts=("--judge",))
    assert code == 0, err  # nothing limited it
    code, _, err, _ = run_job("sh", "-c", "exit 5", opts=("--judge",))
    assert code == 3, err  # the job failed: no fair trial
    with tempfile.TemporaryDirectory() as tmp:
        code, _, err, _ = run_job(PY, script(tmp, "b.py", BURNER), "2", "2", env=fake("run_power_cap"),
                                  opts=("--judge",))
    assert code == 1, err


def test_tag_and_note_are_kept():
    code, doc, err, _ = run_job("true", opts=("--tag", "box-a", "--note", "10% of the data"))
    assert code == 0, err
    assert doc["run"]["tag"] == "box-a" and doc["run"]["note"] == "10% of the data"
    assert "[box-a]" in err


def test_two_run_reports_compare_and_the_faster_is_named():
    """The same job on two "servers": a run that took 0.3 s and one that took 1.5 s; `gpuvet compare`
    names the faster one by its --tag, with the speed-up from the two wall times."""
    with tempfile.TemporaryDirectory() as root:
        paths = []
        for tag, secs in (("box-slow", "1.5"), ("box-fast", "0.3")):
            d = os.path.join(root, tag)
            os.mkdir(d)
            code, _, err = run("run", "--interval", "0.2", "--tag", tag, "--report", d, "--", "sleep", secs,
                               env=NO_DRIVER)
            assert code == 0, err
            paths.append(os.path.join(d, "gpuvet-run.json"))
        code, out, err = run("compare", *paths, "--no-color")
        assert code == 0, err
        text = out
        assert "box-fast" in text and "faster" in text.lower(), text
        code, out, err = run("compare", *paths, "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["faster"] == "box-fast", doc
        assert doc["runs"] == ["box-slow", "box-fast"], doc
        slow, fast = doc["wall_s"]
        assert slow > fast and abs(doc["speedup"] - slow / fast) < 0.01 * doc["speedup"], doc
        # Run reports compare two at a time, and never with check-report options.
        code, _, err = run("compare", *paths, paths[0], env=NO_DRIVER)
        assert code == 2, err
        code, _, err = run("compare", *paths, "--html", env=NO_DRIVER)
        assert code == 2 and "check reports" in err, err


def gpu_matrix_case(scenario):
    with tempfile.TemporaryDirectory() as tmp:
        code, doc, err, _ = run_job(PY, script(tmp, "b.py", BURNER), "3", "2", env=fake(scenario))
    assert code == 0, err
    primary, fired = ids(doc)
    want = MATRIX[scenario]
    assert primary == want, f"{scenario}: primary {primary}, fired {fired}\n{err}"
    others = set(MATRIX.values()) - {want}
    assert not fired & others, f"{scenario}: {fired & others} fired too\n{err}"
    assert doc["run"]["diagnosis"]["seed_peak_reached"] is True, err
    series = {(s["key"], s["gpu"]) for s in doc["series"]}
    assert ("utilization_percent", 0) in series and ("power_w", 0) in series, series
    return doc, err


def test_gpu_rule_input_bound():
    doc, err = gpu_matrix_case("run_input_gaps")
    assert "worker process" in doc["run"]["diagnosis"]["primary"]["message"]


def test_gpu_rule_power_cap():
    doc, err = gpu_matrix_case("run_power_cap")
    assert "1500 MHz of 1980 MHz" in doc["run"]["diagnosis"]["primary"]["message"], err


def test_gpu_rule_thermal():
    gpu_matrix_case("run_thermal")


def test_gpu_rule_one_of_eight_idle():
    doc, err = gpu_matrix_case("run_one_idle_of_8")
    assert "Only 7 of 8 GPUs" in doc["run"]["diagnosis"]["primary"]["message"], err


def test_gpu_rule_pcie_without_nvlink():
    doc, err = gpu_matrix_case("run_pcie_no_nvlink")
    assert doc["run"]["gpus"][0]["nvlink_active_links"] == 0


def test_gpu_rule_pcie_links_near_capacity():
    doc, err = gpu_matrix_case("run_pcie_saturated")
    msg = doc["run"]["diagnosis"]["primary"]["message"]
    assert "PCIe carried up to" in msg and "of its 63.0 GB/s" in msg, msg


def test_gpu_held_back_by_a_power_cap_is_a_straggler():
    """Four GPUs, GPU 2 20 % slower under a power cap only there: D3 names it with the numbers."""
    code, doc, err, _ = run_job("sleep", "2", env=fake("run_straggler_power_cap"))
    assert code == 0, err
    primary, fired = ids(doc)
    assert "D3" in fired, (primary, fired, err)
    d = doc["run"]["diagnosis"]
    d3 = next(f for f in [d["primary"], *d["others"]] if f["id"] == "D3")
    assert "GPU 2 ran slower than the other 3" in d3["message"], d3
    assert "SM clock 1584 MHz against 1980 MHz" in d3["message"] and "20 % lower" in d3["message"], d3
    assert "560 W" in d3["action"], d3


def test_gpu_rule_pcie_replays():
    doc, err = gpu_matrix_case("run_pcie_replays")
    gpu = doc["run"]["gpus"][0]
    # 3 at the first sample and 95 at the last; 55 if a slow start missed the first change.
    assert gpu["pcie_replays"] in (92, 55), gpu
    assert f'{gpu["pcie_replays"]:.0f} PCIe replay' in doc["run"]["diagnosis"]["primary"]["message"], err


def test_gpm_rules_on_hopper():
    """With GPM (the fake serves it on an H100), SM and tensor activity decide what time-based
    utilization and power cannot: tensor cores unused (E3), launch overhead (C3), and compute-bound
    (E2) from SM and tensor activity rather than from the power proxy."""
    with tempfile.TemporaryDirectory() as tmp:
        burner = script(tmp, "b.py", BURNER)
        code, doc, err, _ = run_job(PY, burner, "3", "2", env=fake("run_gpm_tensor_unused"))
        assert code == 0, err
        primary, fired = ids(doc)
        assert primary == "E3" and "E2" not in fired, (primary, fired, err)
        gpu = doc["run"]["gpus"][0]
        assert abs(gpu["tensor_activity_percent"]["mean"] - 1.0) < 0.01, gpu
        code, doc, err, _ = run_job(PY, burner, "3", "2", env=fake("run_gpm_launch_bound"))
        assert code == 0, err
        primary, fired = ids(doc)
        assert primary == "C3" and "E2" not in fired, (primary, fired, err)
        assert "SM activity" in doc["run"]["diagnosis"]["primary"]["message"] or "SM" in err, err
        code, doc, err, _ = run_job(PY, burner, "3", "2", env=fake("run_gpm_compute_bound"))
        assert code == 0, err
        primary, fired = ids(doc)
        assert primary == "E2" and not fired & {"C3", "E1", "E3"}, (primary, fired, err)
        assert "tensor activity" in doc["run"]["diagnosis"]["primary"]["message"], err


def test_gpu_healthy_baseline_fires_none_of_the_matrix():
    code, doc, err, _ = run_job("sleep", "1.5", env=fake("run_steady_busy"))
    primary, fired = ids(doc)
    assert primary == "E2", err
    assert not fired & set(MATRIX.values()), fired


def test_gpu_lost_mid_run_keeps_going():
    code, doc, err, _ = run_job("sleep", "2", env=fake("run_gpu_lost"))
    assert code == 0, err
    assert "GPU 1 was lost" in err, err
    g = {x["index"]: x for x in doc["run"]["gpus"]}
    assert g[1]["lost"] and not g[0]["lost"], g
    assert g[0]["utilization_percent"]["mean"] is not None


def test_mig_is_said_and_the_run_goes_on():
    code, doc, err, _ = run_job("sleep", "1", env=fake("mig_enabled"))
    assert code == 0, err
    assert "MIG mode" in err, err


COUNT_SIGINTS = """
import signal, sys, time
seen = []
signal.signal(signal.SIGINT, lambda *a: seen.append(1))
print("ready", flush=True)
deadline = time.time() + 20
while not seen and time.time() < deadline:
    time.sleep(0.05)
time.sleep(1.0)  # a second, forwarded copy would arrive in this second
sys.exit(len(seen))
"""


def test_ctrl_c_at_the_terminal_reaches_the_job_once():
    import pty
    with tempfile.TemporaryDirectory() as tmp:
        job = script(tmp, "count.py", COUNT_SIGINTS)
        pid, master = pty.fork()
        if pid == 0:
            os.environ.update(NO_DRIVER)
            os.execv(harness_binary(), [harness_binary(), "run", "--no-color", "--", PY, job])
        try:
            harness.read_pty_until(master, b"ready", 20)
            os.write(master, b"\x03")
            out = harness.drain_pty(master, idle_s=10)
        finally:
            _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code == 1, (code, out[-800:])  # the terminal's SIGINT, not a second one from gpuvet
    assert b"stopped by signal 2" in out, out[-800:]



# ---- interval means: periodic jobs and idle GPUs ---------------------------------------------

# Scenario time runs 10x the wall clock, so --interval 0.1 is a 1 Hz tick of the scenario and 0.2 a
# 0.5 Hz one: the aliasing trap (a load period that is a multiple of the tick) at test speed.
PERIODIC = """gpu_count = {gpus}
time_scale = 10
[all]
gpm_supported = false
utilization_gpu_percent = 100
utilization_memory_percent = 50
power_draw_w = 600.0
load_idle_power_w = 90.0
load_period_s = {period}
load_duty = {duty}
load_phase_s = {phase}
"""


def periodic_env(tmp, period, phase, duty=0.6, gpus=2, extra=""):
    path = os.path.join(tmp, f"wave-{period}-{phase}.toml")
    with open(path, "w") as f:
        f.write(PERIODIC.format(gpus=gpus, period=period, duty=duty, phase=phase) + extra)
    env = fake("run_steady_busy")
    env["GPUVET_FAKE_SCENARIO"] = path
    return env


# (load period, tick) in scenario seconds, each at a phase on the tick and one off it.
ALIASING = [(2.0, 1.0, 0.0), (2.0, 1.0, 0.45), (1.0, 1.0, 0.0), (1.0, 1.0, 0.3), (4.0, 2.0, 0.0), (4.0, 2.0, 1.1)]


def aliasing_cases(extra=""):
    """Runs every ALIASING case: the busy share is the duty within 5 points on every GPU, the figures
    say they are interval means, the energy counter's power is the duty's mix, and B1 fires."""
    with tempfile.TemporaryDirectory() as tmp:
        burner = script(tmp, "b.py", BURNER)
        for period, tick, phase in ALIASING:
            env = periodic_env(tmp, period, phase, extra=extra)
            with tempfile.TemporaryDirectory() as d:
                code, _, err = run("run", "--interval", str(tick / 10), "--report", d, "--", PY, burner, "3", "2",
                                   env=env, timeout=120)
                doc = json.load(open(os.path.join(d, "gpuvet-run.json")))
                text = open(os.path.join(d, "gpuvet-run.txt")).read()
            case = f"period {period} s, tick {tick} s, phase {phase} s {extra.strip()}"
            assert code == 0, (case, err)
            for g in doc["run"]["gpus"]:
                busy = g["utilization_percent"]["mean"]
                assert abs(busy - 60) <= 5, (case, g["index"], busy, err)
                assert g["utilization_interval_share"] >= 0.9, (case, g)
                # 600 W busy, 90 W idle: the energy counter's mean is the duty's mix (396 W).
                assert abs(g["power_w"]["mean"] - 396) <= 0.05 * 396 + 15, (case, g["power_w"])
                assert g["power_counter_share"] >= 0.9, (case, g)
            primary, fired = ids(doc)
            assert "B1" in fired, (case, primary, fired, err)
            assert "interval means of the driver's samples" in text, text
            assert "power of GPU 0, 1: the energy counter's difference" in text, text


@slow
def test_periodic_load_is_measured_at_its_duty_whatever_the_phase():
    """A job busy 60 % of every period, the period a multiple of the tick, in phase with the ticks or
    not: the busy share is the duty within 5 points on every GPU, the figures say they are interval
    means, and the job with busy data-loader workers is input-bound (B1). Point reads at the tick land
    in the same phase every time and read 100 % or 0 %."""
    aliasing_cases()


@slow
def test_periodic_load_with_a_driver_that_skips_idle_periods():
    """The same cases on a driver that writes no utilization sample while the GPU is idle: the holes
    in its buffer are the idle 40 %, not time to leave out (which read the job as 100 % busy)."""
    aliasing_cases("samples_skip_idle = true\n")


def periodic_run(tmp, scenario, interval, seconds):
    """gpuvet run of the CPU-burning job for `seconds` on a scenario text; (code, doc, text, err)."""
    path = os.path.join(tmp, "periodic.toml")
    with open(path, "w") as f:
        f.write(scenario)
    env = fake("run_steady_busy")
    env["GPUVET_FAKE_SCENARIO"] = path
    with tempfile.TemporaryDirectory() as d:
        code, _, err = run("run", "--interval", str(interval), "--report", d, "--", PY, script(tmp, "b.py", BURNER),
                           str(seconds), "2", env=env, timeout=120)
        doc = json.load(open(os.path.join(d, "gpuvet-run.json")))
        text = open(os.path.join(d, "gpuvet-run.txt")).read()
    return code, doc, text, err


@slow
def test_a_fifth_of_a_second_period_reads_at_its_duty():
    """A job busy 60 % of every 0.2 s, on the wall clock (each driver sample of 1/6 s straddles the
    busy and idle phases), read every 0.2 s and every 0.5 s, with a driver that skips idle periods
    and one that does not: the busy share is the duty within 5 points."""
    for interval, skip in ((0.2, False), (0.5, True)):
        with tempfile.TemporaryDirectory() as tmp:
            text = PERIODIC.format(gpus=1, period=0.2, duty=0.6, phase=0.03).replace("time_scale = 10", "time_scale = 1")
            if skip:
                text += "samples_skip_idle = true\n"
            code, doc, _, err = periodic_run(tmp, text, interval, 4)
        assert code == 0, err
        g = doc["run"]["gpus"][0]
        assert abs(g["utilization_percent"]["mean"] - 60) <= 5, (interval, skip, g["utilization_percent"], err)
        assert g["utilization_interval_share"] >= 0.9, (interval, skip, g)


@slow
def test_a_minutes_long_period_reads_each_phase():
    """A job busy 72 s of every 2 minutes, on a driver that writes no sample in the idle 48 s: scenario
    time runs 60x the wall clock (one driver sample per 10 scenario seconds, 1/6 s of wall time), so
    four periods pass in 8 s. Ticks of 0.2 s (12 scenario seconds) see whole idle stretches with no
    new sample: they read 0 %, not the last busy sample, and the job reads at its duty."""
    with tempfile.TemporaryDirectory() as tmp:
        text = PERIODIC.format(gpus=1, period=120, duty=0.6, phase=7).replace("time_scale = 10", "time_scale = 60")
        text += "samples_skip_idle = true\nsample_period_s = 10\n"
        code, doc, _, err = periodic_run(tmp, text, 0.2, 8)
    assert code == 0, err
    g = doc["run"]["gpus"][0]
    assert abs(g["utilization_percent"]["mean"] - 60) <= 5, (g["utilization_percent"], err)
    util = next(s for s in doc["series"] if s["key"] == "utilization_percent" and s["gpu"] == 0)["values"]
    idle = [v for v in util if v is not None and v < 1]
    busy = [v for v in util if v is not None and v > 99]
    assert len(idle) >= 8 and len(busy) >= 12, util  # whole ticks in each phase, read as such
    assert g["utilization_interval_share"] >= 0.9, g
    primary, fired = ids(doc)
    assert "B1" in fired, (primary, fired, err)


def test_without_a_sample_buffer_the_summary_says_point_reads():
    with tempfile.TemporaryDirectory() as tmp:
        env = periodic_env(tmp, 2.0, 0.0, gpus=1, extra="samples_supported = false\nenergy_supported = false\n")
        with tempfile.TemporaryDirectory() as d:
            code, _, err = run("run", "--interval", "0.1", "--report", d, "--", "sleep", "1.5", env=env, timeout=60)
            doc = json.load(open(os.path.join(d, "gpuvet-run.json")))
            text = open(os.path.join(d, "gpuvet-run.txt")).read()
    assert code == 0, err
    g = doc["run"]["gpus"][0]
    assert g["utilization_interval_share"] == 0, g
    assert "point reads at each tick" in text, text


def test_contexts_on_all_gpus_with_one_idle_is_a4():
    """The job holds a context on all 8 GPUs (the fake lists gpuvet's child on each) and GPU 7 runs
    nothing: A4 names it with the placement advice, not "compute-bound"."""
    code, doc, err, _ = run_job("sleep", "2", env=fake("run_context_idle_of_8"))
    assert code == 0, err
    primary, fired = ids(doc)
    assert primary == "A4", (primary, fired, err)
    msg = doc["run"]["diagnosis"]["primary"]["message"]
    assert "Only 7 of 8 GPUs" in msg and "12 % of the rented GPU capacity" in msg, msg
    assert "GPU 7 held a context of the job but ran nothing there" in msg, msg
    assert "CUDA_VISIBLE_DEVICES" in doc["run"]["diagnosis"]["primary"]["action"], doc["run"]["diagnosis"]
    assert all(g["job_processes_max"] == 1 for g in doc["run"]["gpus"]), doc["run"]["gpus"]


def harness_binary():
    return harness.GPUVET


if __name__ == "__main__":
    main(globals())
