"""`gpuvet top` end to end on the fake NVML: the recorder (--log CSV and JSON Lines) over a scenario
whose load changes with time (tests/fakes/scenarios/top_timeline.toml: a utilization and power ramp,
a process appearing and leaving, a throttle event, a GPU lost mid-run), the snapshot (--once, --json)
and its hints, the bad situations (no driver, unwritable log, a bad interval, MIG, Ctrl-C/SIGTERM),
the full-screen UI under tmux, and gpustat reading the same fake NVML beside `top --json`.

Scenario time starts when the fake NVML loads (gpuvet's nvmlInit) and `t_s` when the monitor starts,
a few milliseconds later; the checks keep 0.2 s of wall time (2 s of scenario time) off every edge.
"""
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from harness import NO_DRIVER, fake_env, main, run, slow

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")


def scenario_file(text):
    """A scenario written for one test (a real PID of this machine, times relative to now)."""
    fd, path = tempfile.mkstemp(suffix=".toml", prefix="gpuvet-top-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def env_for(path):
    e = fake_env("top_timeline")
    e["GPUVET_FAKE_SCENARIO"] = path
    return e


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def between(rows, gpu, lo, hi):
    """Rows of one GPU whose t_s lies inside [lo, hi] seconds of wall time."""
    return [r for r in rows if r["index"] == str(gpu) and lo <= float(r["t_s"]) <= hi]


def record(fmt, duration="3.4"):  # 4 to 5 s: the tests that call it are in the slow tier
    out = tempfile.mktemp(suffix="." + fmt)
    code, _, err = run("top", "--log", out, "--format", fmt, "--interval", "0.2", "--duration", duration,
                       env=fake_env("top_timeline"), timeout=60)
    assert code == 0, err
    assert "recorded" in err and out in err, err
    return out


@slow
def test_log_csv_follows_the_timeline():
    path = record("csv")
    with open(path) as f:
        header = f.readline().strip().split(",")
    # dmon-like: the header names each unit.
    for col in ("timestamp", "t_s", "index", "utilization.gpu [%]", "memory.used [MiB]", "power.draw [W]",
                "temperature.gpu [C]", "clocks.sm [MHz]", "pcie.rx [MB/s]", "clocks_event_reasons.active"):
        assert col in header, (col, header)
    rows = rows_of(path)
    ticks = {r["t_s"] for r in rows}
    assert len(rows) == 2 * len(ticks), "one row per GPU per tick"
    assert len(ticks) >= 12, f"3.4 s at 0.2 s should give ~17 ticks, got {len(ticks)}"
    # GPU 0: idle, 50% / 400 W from scenario 10 s (wall 1 s), 95% / 690 W from 20 s, idle from 30 s.
    for lo, hi, util, watts in ((0, 0.8, "0", "100.0"), (1.2, 1.8, "50", "400.0"), (2.2, 2.8, "95", "690.0"),
                                (3.2, 9, "0", "100.0")):
        got = between(rows, 0, lo, hi)
        assert got, f"no GPU 0 row between {lo} and {hi} s"
        for r in got:
            # The driver's samples of the tick are the step's value; the mean may carry up to a
            # sample period's correction of the tick before, whose end fell between two samples.
            assert r["utilization.gpu.min [%]"] == r["utilization.gpu.max [%]"] == util, (lo, hi, r)
            assert abs(float(r["utilization.gpu [%]"]) - float(util)) <= 5, (lo, hi, r)
            # Power is the energy counter's mean over the tick: within 1 % of the scenario's watts.
            assert abs(float(r["power.draw [W]"]) - float(watts)) <= 0.01 * float(watts), (lo, hi, r)
    # The process of GPU 0 (20 GiB from 10 s to 30 s) shows as memory in use.
    assert {r["memory.used [MiB]"] for r in between(rows, 0, 1.2, 2.8)} == {"20480"}
    assert {r["memory.used [MiB]"] for r in between(rows, 0, 0, 0.8)} == {"0"}
    # GPU 1: HW slowdown from 15 s (1.5 s wall), lost from 25 s (2.5 s wall); GPU 0 goes on.
    for r in between(rows, 1, 0, 1.3):
        assert (r["clocks.sm [MHz]"], r["clocks_event_reasons.active"], r["state"]) == ("1980", "0x0000000000000000", "ok"), r
    slowed = between(rows, 1, 1.7, 2.3)
    assert slowed
    for r in slowed:
        assert (r["clocks.sm [MHz]"], r["clocks_event_reasons.active"]) == ("1200", "0x0000000000000008"), r
        assert r["clocks_event_reasons.words"] == "HW slowdown", r
    lost = between(rows, 1, 2.7, 9)
    assert lost and all(r["state"] == "lost" and r["utilization.gpu [%]"] == "" for r in lost), lost
    assert between(rows, 0, 2.7, 9), "GPU 0 must keep its rows after GPU 1 is lost"
    os.unlink(path)


@slow
def test_log_jsonl_header_and_absent_values():
    path = record("jsonl", duration="3.2")
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    head = lines[0]
    assert head["record"] == "header" and head["command"] == "top" and head["schema_version"] >= 1
    units = {f["key"]: f["unit"] for f in head["fields"]}
    assert units["utilization.gpu"] == "%" and units["memory.used"] == "MiB" and units["power.draw"] == "W"
    samples = [r for r in lines[1:] if r["record"] == "sample"]
    assert len(samples) == len(lines) - 1
    busy = [r for r in samples if r["index"] == 0 and 2.2 <= r["t_s"] <= 2.8]
    assert busy and all(r["utilization.gpu"] == 95 and abs(r["power.draw"] - 690) <= 6.9 for r in busy), busy
    # GPM of GPU 0 over the interval since the previous tick; absent on the first with the reason.
    first = samples[0]
    assert first["gpm.sm_active"] is None
    assert first["absent_reasons"]["gpm.sm_active"].startswith("needs two samples"), first["absent_reasons"]
    assert all(r["gpm.sm_active"] == 88 for r in busy), busy
    # Fans of SXM boards are not supported: null with the reason, never 0.
    assert first["fan.speed"] is None and "not supported" in first["absent_reasons"]["fan.speed"]
    lost = [r for r in samples if r["index"] == 1 and r["t_s"] >= 2.7]
    assert lost and all(r["state"] == "lost" and r["temperature.gpu"] is None for r in lost)
    assert all("lost" in r["absent_reasons"]["temperature.gpu"].lower() for r in lost)
    os.unlink(path)


def busy_scenario(pid, timed=True):
    """`pid` (a real process here) on GPU 0, which is busy from a timed change at 0 s (`timed`: due at
    the driver's first call, before gpuvet's first read, so no interval straddles it) or from the
    start; GPU 1 idle."""
    busy = """utilization_gpu_percent = 50
power_draw_w = 400.0
temperature_c = 61
"""
    return scenario_file(f"""gpu_count = 2
[gpu.0]
processes = [{{ pid = {pid}, used_memory_mib = 20480, name = "sleep" }}]
""" + (f"""[[gpu.0.changes]]
after_s = 0
{busy}[[gpu.0.changes]]
after_s = 60
utilization_gpu_percent = 95
""" if timed else busy))


def test_json_snapshot_shows_the_values_of_its_time():
    sleeper = subprocess.Popen(["sleep", "30"])
    path = busy_scenario(sleeper.pid)
    try:
        code, out, err = run("top", "--json", env=env_for(path), timeout=30)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["command"] == "top" and "schema_version" in doc
        g0 = doc["gpus"][0]
        # nvidia-smi --query-gpu key names, in the units the "fields" list states.
        assert g0["index"] == 0 and g0["name"] == "NVIDIA H100 80GB HBM3"
        assert g0["uuid"].startswith("GPU-") and g0["pci.bus_id"]
        # The second read's figures cover the 250 ms since the first: the energy counter's mean power.
        assert (g0["utilization.gpu"], g0["temperature.gpu"]) == (50, 61), g0
        assert abs(g0["power.draw"] - 400) <= 4 and g0["utilization.samples"] >= 1, g0
        assert (g0["memory.used"], g0["memory.total"], g0["power.limit"]) == (20480, 81559, 700), g0
        assert g0["pcie.link.gen.current"] == 5 and g0["clocks.sm"] == 1980
        assert g0["clocks_event_reasons.active"] == "0x0000000000000000"
        units = {f["key"]: f["unit"] for f in doc["fields"]}
        assert units["memory.used"] == "MiB" and units["temperature.gpu"] == "C"
        procs = g0["processes"]
        assert [p["pid"] for p in procs] == [sleeper.pid], procs
        assert procs[0]["used_memory"] == 20480 and procs[0]["command"] == "sleep 30", procs
        assert procs[0]["user"] and procs[0]["cpu_percent"] is not None
        assert doc["gpus"][1]["utilization.gpu"] == 0 and doc["gpus"][1]["processes"] == []
        assert "host" in doc["processes_note"].lower()
        host = doc["host"]
        assert host["driver_version"] == "570.124.06" and host["memory_total_bytes"] > 0
    finally:
        sleeper.kill()
        os.unlink(path)


def test_once_prints_one_line_per_gpu_with_hints():
    code, out, err = run("top", "--once", env=fake_env("top_hints"))
    assert code == 0, err
    lines = out.splitlines()
    assert sum(1 for l in lines if l.startswith("[")) == 4, out
    assert "power-capped at 500 W of 700 W" in out, out
    assert "PCIe Gen4 x16 where Gen5 x16 is possible" in out, out
    assert "memory 94% full, utilization 0%: the job is not feeding the GPU" in out, out
    # A PID this /proc lacks keeps its row and says why (NVML shows host PIDs).
    ghost = [l for l in lines if "3999999" in l]
    assert ghost and "1024 MiB" in ghost[0] and "no such PID" in ghost[0], out
    assert "PIDs are the host's" in out


def test_not_a_terminal_behaves_as_once():
    code, out, err = run("top", env=fake_env("top_hints"))  # stdout is a pipe here
    assert code == 0, err
    assert sum(1 for l in out.splitlines() if l.startswith("[")) == 4, out
    assert "\x1b[?1049h" not in out, "no full screen when stdout is not a terminal"


def test_gpus_option_selects_and_rejects():
    code, out, _ = run("top", "--once", "--gpus", "1,3", env=fake_env("top_hints"))
    assert code == 0
    assert [l.split("]")[0] for l in out.splitlines() if l.startswith("[")] == ["[1", "[3"], out
    code, _, err = run("top", "--once", "--gpus", "7", env=fake_env("top_hints"))
    assert code == 2 and "GPU 7 does not exist" in err, err


def test_mig_mode_is_said_per_gpu():
    code, doc_text, err = run("top", "--json", env=fake_env("mig_enabled"))
    assert code == 0, err
    doc = json.loads(doc_text)
    modes = [g["mig.mode.current"] for g in doc["gpus"]]
    assert "Enabled" in modes and "Disabled" in modes, modes
    g = next(g for g in doc["gpus"] if g["mig.mode.current"] == "Enabled")
    assert "MIG" in g["absent_reasons"]["gpm.sm_active"], g["absent_reasons"]
    code, out, _ = run("top", "--once", env=fake_env("mig_enabled"))
    assert "MIG on" in out


def test_no_driver_exits_3_at_once():
    t0 = time.monotonic()
    code, out, err = run("top", "--once", env=NO_DRIVER, timeout=20)
    assert code == 3, (code, err)
    assert "no GPU driver to watch: NVIDIA (" in err and "AMD (" in err and "→" in err, err
    assert time.monotonic() - t0 < 10
    code, out, err = run("top", "--json", env=NO_DRIVER, timeout=20)
    assert code == 3 and json.loads(out)["fatal"]["message"].startswith("no GPU driver to watch"), out


def test_driver_listing_no_gpu_is_exit_3_not_an_empty_screen():
    # A container started without its GPUs: NVML loads and counts 0. An empty snapshot would read
    # as an idle machine.
    code, out, err = run("top", "--once", env=fake_env("driver_lists_no_gpu"), timeout=20)
    assert code == 3, (code, out, err)
    assert "lists no GPU" in err and "NVIDIA_VISIBLE_DEVICES" in err, err


def test_unwritable_log_is_bad_input_before_sampling():
    code, _, err = run("top", "--log", "/nonexistent-dir/gpus.csv", env=fake_env("top_timeline"), timeout=20)
    assert code == 2, err
    assert "/nonexistent-dir/gpus.csv" in err and "cannot write" in err, err
    # Before NVML: no driver needed to find the path wrong.
    code, _, err = run("top", "--log", "/nonexistent-dir/gpus.csv", env=NO_DRIVER, timeout=20)
    assert code == 2, err


def test_bad_options_are_usage_errors():
    for args, needle in ((["--interval", "0.05"], "--interval"), (["--log", "x.csv", "--once"], "--once"),
                         (["--format", "csv"], "--format"), (["--log", "/tmp/x.log", "--format", "xml"], "xml")):
        code, _, err = run("top", *args, env=fake_env("top_hints"), timeout=20)
        assert code == 2, (args, code, err)
        assert needle in err, (args, err)


def test_sigterm_ends_a_recording_cleanly():
    out = tempfile.mktemp(suffix=".csv")
    env = dict(os.environ)
    env.update(fake_env("top_timeline"))
    p = subprocess.Popen([__import__("harness").GPUVET, "top", "--log", out, "--interval", "0.1"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGTERM)
    t0 = time.monotonic()
    _, err = p.communicate(timeout=10)
    assert p.returncode == 0, (p.returncode, err)
    assert time.monotonic() - t0 < 1.5
    with open(out) as f:
        text = f.read()
    assert text.endswith("\n"), "every written tick is complete"
    assert len(text.splitlines()) >= 1 + 2 * 5, text
    os.unlink(out)


# ---- the full-screen UI under tmux ----------------------------------------------------------------

def tmux(*args):
    return subprocess.run(["tmux", "-L", "gpuvet-top-test", *args], capture_output=True, text=True, timeout=20)


def screen():
    return tmux("capture-pane", "-p", "-t", "top").stdout


def wait_for(pred, what, timeout_s=8):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        s = screen()
        if pred(s):
            return s
        time.sleep(0.1)
    raise AssertionError(f"{what} did not appear; the screen was:\n{screen()}")


def test_full_screen_under_tmux():
    assert shutil.which("tmux"), "tmux missing: scripts/install-deps --test installs it"
    env = fake_env("top_hints")
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    tmux("kill-server")
    r = tmux("new-session", "-d", "-s", "top", "-x", "120", "-y", "40",
             f"env -i PATH=/usr/bin:/bin TERM=xterm-256color LANG=C.UTF-8 {exports} PS1='prompt$ ' bash --norc --noprofile")
    assert r.returncode == 0, r.stderr
    try:
        wait_for(lambda s: "prompt$" in s, "the shell prompt")
        tmux("send-keys", "-t", "top", f"{__import__('harness').GPUVET} top --interval 0.2", "Enter")
        s = wait_for(lambda s: "gpuvet top" in s and "[3]" in s, "the header and GPU lines")
        assert "driver 570.124.06" in s and "CUDA 12.8" in s and "RAM" in s and "load" in s, s
        for i in range(4):
            assert f"[{i}] NVIDIA H100 80GB HBM3" in s, s
        assert "power-capped at 500 W of 700 W" in s and "UTIL [" in s, s
        assert "PIDs are the host's" in s and "3999999" in s, s
        # A digit shows that GPU alone; the same digit again, all of them.
        tmux("send-keys", "-t", "top", "1")
        s = wait_for(lambda s: "showing GPU 1" in s, "the filter")
        assert "[1] NVIDIA" in s and "[0] NVIDIA" not in s and "[3] NVIDIA" not in s, s
        tmux("send-keys", "-t", "top", "1")
        wait_for(lambda s: "[0] NVIDIA" in s and "[3] NVIDIA" in s, "all GPUs again")
        # Help, then any key closes it.
        tmux("send-keys", "-t", "top", "?")
        wait_for(lambda s: "gpuvet top: keys" in s, "the help")
        tmux("send-keys", "-t", "top", "x")
        wait_for(lambda s: "gpuvet top: keys" not in s, "the help closing")
        # Sort key cycles the process order's name on the status line.
        tmux("send-keys", "-t", "top", "s")
        wait_for(lambda s: "sort CPU%" in s, "the next sort order")
        # Resizes: smaller redraws compactly, too small says so, larger draws again.
        tmux("resize-window", "-t", "top", "-x", "80", "-y", "14")
        s = wait_for(lambda s: "[3]" in s and len(s.splitlines()[0]) <= 80, "a compact redraw")
        tmux("resize-window", "-t", "top", "-x", "40", "-y", "5")
        wait_for(lambda s: "terminal too small (40x5)" in s, "the too-small message")
        tmux("resize-window", "-t", "top", "-x", "120", "-y", "40")
        wait_for(lambda s: "[0] NVIDIA H100 80GB HBM3" in s and "too small" not in s, "the full screen again")
        # q leaves the alternate screen: the shell prompt is back and the monitor is gone.
        tmux("send-keys", "-t", "top", "q")
        s = wait_for(lambda s: s.rstrip().endswith("prompt$") and "UTIL [" not in s, "the prompt after q")
        tmux("send-keys", "-t", "top", "echo rc=$?", "Enter")
        wait_for(lambda s: "rc=0" in s, "exit code 0")
        # Ctrl-C ends it the same way.
        tmux("send-keys", "-t", "top", "clear", "Enter")
        tmux("send-keys", "-t", "top", f"{__import__('harness').GPUVET} top", "Enter")
        wait_for(lambda s: "UTIL [" in s, "the monitor again")
        tmux("send-keys", "-t", "top", "C-c")
        wait_for(lambda s: "UTIL [" not in s and "prompt$" in s, "the prompt after Ctrl-C")
    finally:
        tmux("kill-server")


# ---- gpustat on the same fake NVML ----------------------------------------------------------------

def test_gpustat_agrees_with_top_json():
    """gpustat (PyPI) loads libnvidia-ml.so.1 by name (pynvml: CDLL("libnvidia-ml.so.1")), so a folder
    holding that name as a link to the fake, first on LD_LIBRARY_PATH, makes it read the same fake."""
    gpustat = shutil.which("gpustat")
    assert gpustat, "gpustat missing: scripts/install-deps --test installs it"
    if "log_path=" in os.environ.get("ASAN_OPTIONS", ""):
        # The sanitized tree (tests/sanitize/checked): its fake NVML is built with ASan, which a plain
        # Python cannot load unless ASan's runtime comes first; the plain tree runs this comparison.
        print("gpustat comparison: run in the plain tree only (sanitized fake NVML)")
        return
    sleeper = subprocess.Popen(["sleep", "60"])
    path = busy_scenario(sleeper.pid, timed=False)  # each program's NVML time starts at its own init
    lib = tempfile.mkdtemp(prefix="gpuvet-nvml-")
    env = env_for(path)
    os.symlink(env["GPUVET_LIBNVML"], os.path.join(lib, "libnvidia-ml.so.1"))
    try:
        genv = dict(os.environ, GPUVET_FAKE_SCENARIO=path, LD_LIBRARY_PATH=lib)
        g = subprocess.run([gpustat, "--json"], capture_output=True, text=True, env=genv, timeout=60)
        assert g.returncode == 0, g.stderr
        theirs = json.loads(g.stdout)
        code, out, err = run("top", "--json", env=env, timeout=30)
        assert code == 0, err
        ours = json.loads(out)
        assert theirs["driver_version"] == ours["host"]["driver_version"]
        assert len(theirs["gpus"]) == len(ours["gpus"]) == 2
        for t, o in zip(theirs["gpus"], ours["gpus"]):
            for key in ("index", "uuid", "name", "temperature.gpu", "utilization.gpu", "memory.used",
                        "memory.total", "enforced.power.limit"):
                assert t[key] == o[key], (key, t[key], o[key])
            # gpustat reads the driver's power (and truncates to W); top the energy counter's mean over
            # its snapshot's 250 ms: within 1 %.
            assert abs(t["power.draw"] - o["power.draw"]) <= 0.01 * o["power.draw"] + 1, (t["power.draw"], o["power.draw"])
            assert t["fan.speed"] is None and o["fan.speed"] is None  # N/A on SXM, not 0
            tp = [(p["pid"], p["gpu_memory_usage"], p["command"]) for p in t["processes"]]
            op = [(p["pid"], p["used_memory"], p["command"].split()[0]) for p in o["processes"]]
            assert tp == op, (tp, op)
        assert ours["gpus"][0]["processes"], "the busy GPU's process is in both"
    finally:
        sleeper.kill()
        shutil.rmtree(lib)
        os.unlink(path)


THERMAL_DIP = """gpu_count = 1
[[gpu.0.changes]]
after_s = 1.4
clock_event_reasons = ["sw_thermal_slowdown"]
sm_clock_mhz = 1500
[[gpu.0.changes]]
after_s = 1.6
clock_event_reasons = []
sm_clock_mhz = 1980
"""


def test_a_thermal_dip_between_ticks_shows_as_a_throttled_share():
    """A 200 ms thermal slowdown between two 1 s ticks: the reason bits read at the ticks miss it, the
    violation counter counts it as the share of the interval it fell in (20 % of that second), and
    the SM clock's interval mean dips with it; each row says how its figures were obtained."""
    path = scenario_file(THERMAL_DIP)
    out = tempfile.mktemp(suffix=".jsonl")
    try:
        code, _, err = run("top", "--log", out, "--interval", "1", "--duration", "3.5", env=env_for(path), timeout=60)
        assert code == 0, err
        with open(out) as f:
            rows = [r for r in map(json.loads, f) if r["record"] == "sample"]
    finally:
        os.unlink(path)
        if os.path.exists(out):
            os.unlink(out)
    assert len(rows) >= 3, rows
    assert rows[0]["throttled.thermal"] is None, rows[0]  # a counter needs two reads
    shares = [(r["t_s"], r["throttled.thermal"]) for r in rows[1:]]
    held_s = sum(pct / 100 * (t - prev["t_s"]) for (t, pct), prev in zip(shares, rows))
    assert abs(held_s - 0.2) <= 0.03, shares
    dip = max(rows[1:], key=lambda r: r["throttled.thermal"])
    assert dip["throttled.origin"] == "counter difference", dip
    # Scenario time runs a few ms ahead of t_s; a read delayed into the dip (a loaded machine)
    # splits it between two intervals, whose sum is checked above.
    if not any(1.3 <= r["t_s"] <= 1.7 for r in rows):
        assert 15 <= dip["throttled.thermal"] <= 25, shares
        # That interval's SM clock is its mean: 0.2 s at 1500 MHz in about a second at 1980 MHz.
        assert 1850 <= dip["clocks.sm"] <= 1920 and dip["clocks.sm.origin"] == "interval mean", dip
    # The bits are what the driver said at each read: at most one read can have landed in the dip.
    caught = [r for r in rows if "thermal" in (r["clocks_event_reasons.words"] or "")]
    assert len(caught) <= 1, caught
    assert all(r["power.origin"] in ("counter difference", "point read") for r in rows), rows
    assert rows[-1]["power.origin"] == "counter difference" and rows[0]["power.origin"] == "point read", rows


if __name__ == "__main__":
    main(globals())
