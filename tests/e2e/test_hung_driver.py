"""A driver call that never returns, end to end: the doubles' GPUVET_FAKE_HANG knob (tests/fakes/fake_hang.hpp)
makes a call block forever, as a wedged kernel driver stuck in an ioctl does, and every command must still
end on its own, in about its budget (GPUVET_DRIVER_TIMEOUT_S, 1 s here), with exit 3, the call and the GPU
named ("... did not return in 1 s: the driver is wedged; check `dmesg` ..."), a complete report, and the
GPUs and host checks that still answer measured. SIGTERM during the hang ends the run within seconds.

Every run has a deadline of its own (RUN_LIMIT_S): a hang of gpuvet fails the test instead of holding it.
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import harness
from harness import main, slow

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
SCEN = os.path.join(TESTS, "fakes", "scenarios")

RUN_LIMIT_S = 90  # far above what a 1 s budget needs, even on a loaded 2-core machine
WEDGED = "the driver is wedged; check `dmesg` for Xid and NVRM messages, a reset or reboot is needed"


def env_with(hang, scenario="healthy_8x_h100_sxm.toml", budget="1"):
    e = {
        "GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
        "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
        "GPUVET_CUBLASLT": os.path.join(FAKES, "libfakecublaslt.so"),
        "GPUVET_NCCL": os.path.join(FAKES, "libfakenccl.so"),
        "GPUVET_FAKE_SCENARIO": os.path.join(SCEN, scenario),
        "GPUVET_FAKE_HANG": hang,
    }
    if budget is not None:
        e["GPUVET_DRIVER_TIMEOUT_S"] = budget
    return e


def run(args, env):
    t = time.monotonic()
    code, out, err = harness.run(*args, env=env, timeout=RUN_LIMIT_S)
    return code, out, err, time.monotonic() - t


def run_json(args, env):
    code, out, err, took = run([*args, "--json"], env)
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as ex:
        raise AssertionError(f"{args}: not JSON ({ex}); stdout:\n{out}\nstderr:\n{err}")
    return code, doc, err, took


def check_verdicts(doc):
    return {(c["key"], c["gpu"]): c for c in doc["checks"]}


# ---- the budget ------------------------------------------------------------------------------------


def test_bad_budget_is_exit_2():
    code, out, err, _ = run(["inventory"], env_with("", budget="soon"))
    assert code == 2, (code, out, err)
    assert "GPUVET_DRIVER_TIMEOUT_S='soon'" in err, err


@slow
def test_default_budget_is_30_s_and_named():
    # nvmlInit hangs and the budget is the default: SIGTERM ends the wait long before 30 s, and
    # the message says how long the call had been waited for.
    p = subprocess.Popen([harness.GPUVET, "check", "--only", "gpu.identity", "--json"],
                         env={**os.environ, **env_with("nvmlInit", budget=None)},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2)
        assert p.poll() is None, p.communicate()
        t = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=RUN_LIMIT_S)
        took = time.monotonic() - t
    finally:
        if p.poll() is None:
            p.kill()
    harness.check_no_crash(["check"], p.returncode, err)
    assert p.returncode == 3, (p.returncode, out, err)
    assert took < 5, f"took {took:.1f} s after SIGTERM"
    doc = json.loads(out)
    assert doc["interrupted"] is True
    assert "nvmlInit_v2 had not returned after" in out, out


# ---- nvmlInit / cuInit never return ------------------------------------------------------------------


def test_inventory_nvml_init_hangs():
    code, doc, err, took = run_json(["inventory"], env_with("nvmlInit"))
    text = json.dumps(doc)
    assert code == 3, (code, err)
    assert "nvmlInit_v2 did not return in 1 s: " + WEDGED in text, text[:2000]
    assert took < 60


def test_inventory_cuinit_hangs():
    code, doc, err, took = run_json(["inventory"], env_with("cuInit"))
    text = json.dumps(doc)
    assert code == 3, (code, err)
    assert "cuInit did not return in 1 s: " + WEDGED in text, text[:2000]
    # NVML still answers: the GPUs are listed
    assert "NVIDIA H100 80GB HBM3" in text


def test_inventory_terminal_names_the_call():
    code, out, err, _ = run(["inventory"], env_with("nvmlInit"))
    assert code == 3, (code, out, err)
    assert "nvmlInit_v2 did not return in 1 s" in out + err, out + err


def test_check_nvml_init_hangs_host_checks_go_on():
    code, doc, err, _ = run_json(["check", "--only", "gpu.identity,gpu.health,host.cpu"], env_with("nvmlInit"))
    assert code == 3, (code, err)
    assert doc["verdict"] in ("INCOMPLETE", "COULD_NOT_RUN"), doc["verdict"]
    text = json.dumps(doc)
    assert "did not return in 1 s" in text, text[:3000]
    host = [c for c in doc["checks"] if c["key"] == "host.cpu"]
    assert host and all(c["verdict"] not in ("ERROR",) for c in host), host


def test_check_cuinit_hangs():
    code, doc, err, _ = run_json(["check", "--only", "gpu.identity,gpu.fp_peak"], env_with("cuInit"))
    assert code == 3, (code, err)
    assert "cuInit did not return in 1 s" in json.dumps(doc)


def test_top_once_nvml_init_hangs():
    code, out, err, took = run(["top", "--once"], env_with("nvmlInit"))
    assert code == 3, (code, out, err)
    assert "nvmlInit_v2 did not return in 1 s" in out + err, out + err


# ---- one GPU's calls never return ----------------------------------------------------------------------


def test_inventory_one_gpu_hangs_others_listed():
    code, doc, err, _ = run_json(["inventory"], env_with("nvmlDeviceGetName@3"))
    text = json.dumps(doc)
    assert code == 3, (code, err)
    assert "GPU 3: nvmlDeviceGetName did not return in 1 s: " + WEDGED in text, text[:3000]
    # the GPU 3's later calls fail fast, and the seven others are read in full
    assert text.count("NVIDIA H100 80GB HBM3") >= 7, text[:3000]


def test_check_one_gpu_hangs_others_measured():
    code, doc, err, _ = run_json(["check", "--only", "gpu.identity,gpu.health"], env_with("*@2"))
    assert code == 3, (code, err)
    v = check_verdicts(doc)
    mine = [c for (k, g), c in v.items() if g == 2]
    others = [c for (k, g), c in v.items() if g not in (2, None)]
    assert mine and any(c["verdict"] == "ERROR" for c in mine), mine
    assert "GPU 2: " in json.dumps(mine) and "did not return in 1 s" in json.dumps(mine), mine
    assert others and all(c["verdict"] != "ERROR" for c in others), [(c["key"], c["gpu"], c["verdict"]) for c in others]


def test_top_once_one_gpu_hangs():
    code, out, err, _ = run(["top", "--once"], env_with("nvmlDeviceGetPowerUsage@1"))
    assert code in (0, 3), (code, out, err)
    assert "GPU 1: nvmlDeviceGetPowerUsage did not return in 1 s" in out + err, out + err


@slow
def test_burn_one_gpus_matmul_hangs():
    # The work calls' budget is ten times the query budget: 10 s here, far above what a healthy
    # simulated GEMM takes even on a loaded machine.
    code, doc, err, _ = run_json(["burn", "--duration", "10s"], env_with("cublasLtMatmul@1"))
    assert code == 3, (code, err)
    mine = [c for c in doc["checks"] if c["key"] == "gpu.burn" and c["gpu"] == 1]
    assert mine and mine[0]["verdict"] == "ERROR", mine
    assert "cuBLASLt device 1: cublasLtMatmul did not return in 10 s: " + WEDGED in mine[0]["summary"], mine


@slow
def test_bench_fp_kernel_hangs_on_one_gpu():
    code, doc, err, _ = run_json(["bench", "fp"], env_with("cuLaunchKernel@1", scenario="healthy_2x_h100_pcie.toml",
                                                          budget="0.5"))
    assert code == 3, (code, err)
    text = json.dumps(doc)
    assert "CUDA device 1: cuLaunchKernel did not return in 5 s" in text, text[:3000]


@slow
def test_a_late_answer_after_the_deadline_touches_nothing_freed():
    # Every kernel launch on GPU 0 answers after 2.6 s, past its 2 s work budget: gpuvet moves on
    # while the call still runs, and the call then reads its parameters and writes its results.
    # What it touches must still be there (the sanitized run fails on a use after free), and the
    # run goes on with the other GPUs and reports GPU 0's call. GPU 1's launches each take 0.15 s
    # (well inside the budget), so the run is still going when the late answer comes, on a fast
    # machine as on a slow one.
    t = time.monotonic()
    code, doc, err, _ = run_json(["bench", "fp"], env_with("cuLaunchKernel@0=2.6,cuLaunchKernel@1=0.15",
                                                          scenario="healthy_2x_h100_pcie.toml", budget="0.2"))
    assert code == 3, (code, err)
    text = json.dumps(doc)
    assert "CUDA device 0: cuLaunchKernel did not return in 2 s" in text, text[:3000]
    assert time.monotonic() - t > 2.6, "the run ended before the late answer came: nothing was tested"
    fp1 = [c for c in doc["checks"] if c["key"] == "gpu.fp_peak" and c["gpu"] == 1]
    assert fp1 and fp1[0]["verdict"] == "PASS", fp1


@slow
def test_export_says_stale_then_serves_the_gpus_that_answer():
    # GPU 0's temperature read, made on every tick, hangs from 1.5 s on (power is not the knob: it
    # comes from the energy counter, with the power reading only as its fallback); with an 8 s
    # budget the sampler is stuck past the stale bound (3 intervals + 5 s), /metrics keeps
    # answering and says stale, then the call is abandoned and the other GPUs are served again
    # while GPU 0 stays wedged.
    import test_export
    env = env_with("nvmlDeviceGetTemperature@0+1.5", budget="8")
    with test_export.Exporter(None, "--interval", "0.2", env=env) as ex:
        ex.wait_healthy()
        start = time.monotonic()
        saw_stale = recovered = None
        while time.monotonic() - start < 40:
            page = ex.metrics()  # always answers
            stale = test_export.one(page, "gpuvet_sample_stale")[1]
            if stale == 1 and saw_stale is None:
                saw_stale = page
            if saw_stale is not None and stale == 0:
                recovered = page
                break
            time.sleep(0.2)
        assert saw_stale, "the stuck sampler was never reported stale"
        assert recovered, "the sampler never came back after the budget"
        power = test_export.series(recovered, "DCGM_FI_DEV_POWER_USAGE")
        gpus = {labels.get("gpu") for labels, _ in power}
        assert "0" not in gpus and "1" in gpus, power
        code, err = ex.stop(limit_s=12)
        assert code == 0, err


# ---- signals while a call hangs ----------------------------------------------------------------------------


def interrupted(args, hang, sig, at_s=1.5, budget="60"):
    p = subprocess.Popen([harness.GPUVET, *args], env={**os.environ, **env_with(hang, budget=budget)},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(at_s)
        assert p.poll() is None, p.communicate()
        t = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=RUN_LIMIT_S)
        return p.returncode, out, err, time.monotonic() - t
    finally:
        if p.poll() is None:
            p.kill()


def test_sigterm_during_hung_init_ends_check():
    code, out, err, took = interrupted(["check", "--only", "gpu.identity,host.cpu", "--json"], "nvmlInit",
                                       signal.SIGTERM)
    harness.check_no_crash(["check"], code, err)
    assert code == 3, (code, out, err)
    assert took < 5, f"{took:.1f} s"
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["exit_code"] == 3


def test_sigint_during_hung_call_ends_inventory():
    code, out, err, took = interrupted(["inventory", "--json"], "nvmlDeviceGetName@0", signal.SIGINT)
    assert code == 3, (code, out, err)
    assert took < 5, f"{took:.1f} s"
    json.loads(out)


@slow
def test_sigterm_during_hung_call_ends_top_log():
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "top.csv")
        code, out, err, took = interrupted(["top", "--log", log, "--interval", "0.2"], "nvmlDeviceGetTemperature@0+1",
                                           signal.SIGTERM, at_s=3)
        assert took < 5, f"{took:.1f} s: {err}"
        assert code in (0, 3), (code, out, err)



# ---- run: the job starts and ends whatever the driver does ---------------------------------------------------


def job_env(hang, budget):
    return {**os.environ, **env_with(hang, budget=budget)}


def wait_for_file(path, limit_s):
    deadline = time.monotonic() + limit_s
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return os.path.exists(path)


def test_run_sigterm_while_nvml_init_hangs_ends_in_seconds_with_the_jobs_code():
    # nvmlInit never returns and the budget is a minute: the job starts anyway (after a short wait
    # for the GPUs), SIGTERM reaches it at once, and its exit code and summary come out in seconds.
    with tempfile.TemporaryDirectory() as d:
        mark = os.path.join(d, "started")
        job = f"trap 'echo job-got-term >&2; exit 7' TERM; touch {mark}; sleep 60 & wait"
        t0 = time.monotonic()
        p = subprocess.Popen([harness.GPUVET, "run", "--interval", "0.2", "--", "bash", "-c", job],
                             env=job_env("nvmlInit", "60"), stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for_file(mark, 30), "the job did not start while nvmlInit hung"
            started_s = time.monotonic() - t0
            t = time.monotonic()
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=RUN_LIMIT_S)
            took = time.monotonic() - t
        finally:
            if p.poll() is None:
                p.kill()
        harness.check_no_crash(["run"], p.returncode, err)
        assert started_s < 20, f"the job started {started_s:.1f} s after gpuvet"
        assert took < 10, f"{took:.1f} s after SIGTERM: {err}"
        assert p.returncode == 7, (p.returncode, err)
        assert "SIGTERM passed on to the job" in err and "job-got-term" in err, err
        assert "the GPU driver did not answer within 5 s" in err and "exit 7 (gpuvet exit 7)" in err, err


def test_run_job_ending_while_nvml_init_hangs_is_not_held():
    t = time.monotonic()
    code, out, err, _ = run(["run", "--", "true"], env_with("nvmlInit", budget="60"))
    took = time.monotonic() - t
    assert code == 0, (code, err)
    assert took < 30, f"{took:.1f} s for a job that ends at once"
    assert "host side only" in err or "recording the host side only" in err, err


def test_run_stop_before_the_job_started_runs_nothing():
    with tempfile.TemporaryDirectory() as d:
        mark = os.path.join(d, "started")
        p = subprocess.Popen([harness.GPUVET, "run", "--", "touch", mark], env=job_env("nvmlInit", "60"),
                             stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(1)
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=RUN_LIMIT_S)
        finally:
            if p.poll() is None:
                p.kill()
        assert p.returncode == 128 + signal.SIGTERM, (p.returncode, err)
        assert "the job was not started" in err and not os.path.exists(mark), err


@slow
def test_run_call_hanging_mid_run_is_given_up_when_the_job_ends():
    # GPU 0's temperature reading hangs from 2 s on; the job ends at 4 s; the budget is a minute.
    t = time.monotonic()
    code, out, err, _ = run(["run", "--interval", "0.2", "--", "sleep", "4"],
                            env_with("nvmlDeviceGetTemperature@0+2", budget="60"))
    took = time.monotonic() - t
    assert code == 0, (code, err)
    assert took < 30, f"{took:.1f} s"
    assert "GPU 0: nvmlDeviceGetTemperature had not returned after" in err and "when the job had ended" in err, err
    assert re.search(r"wall time 4\.\d s", err), err  # the job's time, not the wait for the hung call


# ---- every command against a hung driver, from the list of commands ------------------------------------------


def command_names():
    code, out, err = harness.run("--help")
    assert code == 0, err
    names, inside = [], False
    for line in out.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            inside = True
            continue
        if inside:
            if not line.startswith("  ") or not line.strip():
                if names:
                    break
                continue
            names.append(line.split()[0])
    assert names, out
    return names


# How each command runs against a hung driver: (arguments, the hung calls, budget, allowed exit codes,
# a text the output must hold). Commands that read no driver run with every driver call hung: they
# must not notice. A new command fails test_every_command_is_covered until it has a row here.
ALL_HUNG = "nvmlInit,cuInit,cublasLtMatmul,ncclCommInitAll"


def hung_rows(d):
    report = os.path.join(d, "a.json")
    code, out, err = harness.run("check", "--quick", "--only", "gpu.identity", "--json", env=env_with(""))
    assert code in (0, 1), err
    with open(report, "w") as f:
        f.write(out)
    other = os.path.join(d, "b.json")
    doc = json.loads(out)
    doc["machine"]["hostname"] = "other-box"
    with open(other, "w") as f:
        json.dump(doc, f)
    hist = {"GPUVET_HISTORY_DB": os.path.join(d, "history.sqlite")}
    init = "nvmlInit_v2 did not return in 1 s"
    import test_export
    return {
        "check": [(["check", "--quick", "--only", "gpu.identity,gpu.health,gpu.nvlink,host.cpu", "--json",
                    "--no-history"], "nvmlInit", "1", (3,), init)],
        "inventory": [(["inventory", "--json"], "nvmlInit", "1", (3,), init)],
        "top": [(["top", "--once"], "nvmlInit", "1", (3,), init)],
        "export": [(["export", "--listen", f"127.0.0.1:{test_export.free_port()}"], "nvmlInit", "1", (3,), init)],
        "run": [(["run", "--", "true"], "nvmlInit", "1", (0,), init)],
        "burn": [(["burn", "--duration", "5s", "--json", "--no-history"], "cuInit", "1", (3,),
                  "cuInit did not return in 1 s")],
        "bench": [(["bench", "gemm", "--json", "--no-history"], "cublasLtMatmul@0", "0.5", (3,),
                   "cublasLtMatmul did not return in 5 s"),
                  (["bench", "allreduce", "--json", "--no-history"], "ncclCommInitAll", "0.5", (3,),
                   "ncclCommInitAll did not return in 5 s")],
        # The node modes give the checks' driver calls a quarter of the checks' time: the prolog's
        # 40 s less 2 s to reap a stuck child, the health check's 28 s less two 8 s Slurm calls and
        # two reaps.
        "fleet": [(["fleet", "prolog"], "nvmlInit", None, (0,), "nvmlInit_v2 did not return in 9.5 s"),
                  (["fleet", "health-check", "--node-timeout", "28"], "nvmlInit", None, (3,),
                   "nvmlInit_v2 did not return in 2 s")],
        "host": [(["host", "cpu", "--quick", "--json"], ALL_HUNG, "1", (0, 1, 3), None)],
        "specs": [(["specs", "compare", "a100", "h100"], ALL_HUNG, "1", (0,), None)],
        "plan": [(["plan", "--model", "llama-3-8b", "--task", "inference"], ALL_HUNG, "1", (0, 1), None)],
        "report": [(["report", report], ALL_HUNG, "1", (0, 1), None)],
        "compare": [(["compare", report, other], ALL_HUNG, "1", (0, 1), None)],
        "history": [(["history"], ALL_HUNG, "1", (0, 2), None)],
    }, hist


def run_hung_row(args, hang, budget, codes, text, extra_env):
    code, out, err, took = run(args, {**env_with(hang, budget=budget), **extra_env})
    harness.check_no_crash(args, code, err)
    assert code in codes, (args, code, out[-1500:], err[-1500:])
    if text:
        assert text in out + err, (args, text, out[-1500:], err[-1500:])
    return took


def test_every_command_is_covered():
    with tempfile.TemporaryDirectory() as d:
        rows, _ = hung_rows(d)
        missing = sorted(set(command_names()) - set(rows))
        assert not missing, f"no hung-driver row for: {missing} (add one to hung_rows)"


@slow
def test_every_command_ends_on_its_own_against_a_hung_driver():
    with tempfile.TemporaryDirectory() as d:
        rows, hist = hung_rows(d)
        for name in command_names():
            for args, hang, budget, codes, text in rows[name]:
                took = run_hung_row(args, hang, budget, codes, text, hist)
                assert took < RUN_LIMIT_S, (args, took)


def test_bench_gemm_matmul_hangs():
    with tempfile.TemporaryDirectory() as d:
        rows, hist = hung_rows(d)
        run_hung_row(*rows["bench"][0], hist)


@slow
def test_bench_allreduce_nccl_init_hangs():
    with tempfile.TemporaryDirectory() as d:
        rows, hist = hung_rows(d)
        run_hung_row(*rows["bench"][1], hist)


def test_fleet_prolog_and_health_check_end_inside_their_budget():
    # The default driver budget (30 s) is longer than a quarter of the node's: the checks get a
    # quarter of --node-timeout (40 s by default, 8 s here), so the hung call is named in time.
    with tempfile.TemporaryDirectory() as d:
        rows, hist = hung_rows(d)
        for row in rows["fleet"]:
            took = run_hung_row(*row, hist)
            assert took < 40, (row[0], took)


def test_full_screen_top_obeys_q_while_the_driver_hangs():
    import pty
    import select
    import struct
    import fcntl
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    # GPU 0's temperature reading (each tick reads it) hangs from 1.5 s on; the budget is a minute.
    env = {**job_env("nvmlDeviceGetTemperature@0+1.5", "60"), "TERM": "xterm-256color"}
    p = subprocess.Popen([harness.GPUVET, "top", "--interval", "0.2"], stdin=slave, stdout=slave, stderr=slave,
                         env=env, start_new_session=True)
    os.close(slave)
    seen = b""

    def read_until(pred, limit_s):
        nonlocal seen
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not pred(seen):
            if select.select([master], [], [], 0.1)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        return pred(seen)

    try:
        assert read_until(lambda s: b"gpuvet top" in s and b"[0]" in s, 30), seen[-2000:]
        assert read_until(lambda s: b"STALE" in s and b"driver is not answering" in s, 30), seen[-2000:]
        t = time.monotonic()
        os.write(master, b"q")
        code = p.wait(timeout=20)
        took = time.monotonic() - t
        read_until(lambda s: False, 0.5)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    assert took < 5, f"{took:.1f} s after q"
    assert code == 0, (code, seen[-2000:])
    assert seen.rstrip().endswith(b"\x1b>") or b"\x1b[?1049l" in seen, seen[-300:]  # the screen was left

if __name__ == "__main__":
    main(globals())
