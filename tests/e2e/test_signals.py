"""Ctrl-C and SIGTERM end to end: the real binary on the driver test doubles (and the host checks on this
machine), a signal sent at a few moments of each command, and what must hold afterwards:

- an interrupted run is never GO and never exits 0: INCOMPLETE (or COULD_NOT_RUN when nothing was judged yet),
  exit 3, or NO-GO / exit 1 only when something really failed (never on these healthy scenarios);
- the JSON report is complete: `interrupted` is true, the checks a stop kept from running say
  "not run: interrupted", and no rate is a made-up 0 (a cut-short figure is absent with a reason);
- gpuvet exits within STOP_LIMIT_S of the signal; a second signal exits at once (exit 3), restoring the terminal;
- no child process outlives gpuvet, temporary files are gone, a killed server frees its port.

STOP_LIMIT_S is 1.5 s although gpuvet polls its stop flag well under a second: this machine has 2 cores
shared with other builds, and the figure includes printing the report and process exit.
"""
import json
import os
import pty
import signal
import socket
import subprocess
import tempfile
import time

import harness
from harness import NO_DRIVER, main, run, slow

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
SCEN = os.path.join(TESTS, "fakes", "scenarios")

STOP_LIMIT_S = 1.5
RATE_UNITS = {"GB/s", "TFLOPS", "TOPS", "Gbit/s", "IOPS"}  # a measured rate is never exactly 0 here


def fakes(scenario):
    return {
        "GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
        "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
        "GPUVET_CUBLASLT": os.path.join(FAKES, "libfakecublaslt.so"),
        "GPUVET_NCCL": os.path.join(FAKES, "libfakenccl.so"),
        "GPUVET_FAKE_SCENARIO": os.path.join(SCEN, scenario),
    }


def children_of(pid):
    """Pids whose parent is `pid`, from /proc (no psutil)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def start(args, env, stderr=subprocess.PIPE):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env)
    return subprocess.Popen([harness.GPUVET, *args], env=e, stdout=subprocess.PIPE, stderr=stderr, text=True)


def interrupt(args, env, at_s, sig=signal.SIGINT, watch_children=False):
    """Starts gpuvet, sends `sig` at_s seconds in; returns (exit code, JSON doc, stderr, seconds to stop, children)."""
    p = start(args, env)
    time.sleep(at_s)
    assert p.poll() is None, f"{args} ended before the signal at {at_s} s: {p.communicate()}"
    kids = children_of(p.pid) if watch_children else []
    t = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - t
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as ex:
        raise AssertionError(f"{args}: not JSON after {sig!r} ({ex}); stdout:\n{out}\nstderr:\n{err}")
    return p.returncode, doc, err, took, kids


def assert_incomplete(args, code, doc, err, took, healthy=True):
    """What every interrupted run must show."""
    what = f"{args}: exit {code}, verdict {doc.get('verdict')}\nstderr:\n{err}"
    assert code != 0 and doc["verdict"] not in ("PASS", "WARN"), what
    assert doc["interrupted"] is True, what
    assert doc["exit_code"] == code, what
    assert doc["schema_version"] == 3, what
    if healthy:  # nothing is wrong with the healthy scenarios: a stop is never blamed on the hardware
        assert code == 3 and doc["verdict"] in ("INCOMPLETE", "COULD_NOT_RUN"), what
        fails = [(c["key"], c["gpu"], c["summary"]) for c in doc["checks"] if c["verdict"] in ("FAIL", "ERROR")]
        assert not fails, f"{what}\nfailed on a stop: {fails}"
    zeros = [(c["key"], m["key"]) for c in doc["checks"] for m in c["measurements"]
             if m["unit"] in RATE_UNITS and m["value"] == 0]
    assert not zeros, f"{what}\nmade-up zero rates: {zeros}"
    for c in doc["checks"]:
        for m in c["measurements"]:
            assert m["value"] is not None or m.get("text") is not None or m["absent_reason"], (c["key"], m)
    assert took < STOP_LIMIT_S, f"{what}\ntook {took:.2f} s from the signal to the exit"


def check_args():
    # gpu.fp_peak, not gpu.memory_bandwidth: the fake interprets the kernels, and 80 GiB GPUs are
    # too big for the bandwidth kernels there (test_gpu_measure.py runs them on small memory).
    return ["check", "--only", "gpu.fp_peak,gpu.p2p,gpu.burn,order", "--expect", "8x H100",
            "--burn-duration", "60s", "--json"]


@slow
def test_check_interrupted_at_several_moments():
    args = check_args()
    seen_not_run = False
    for at_s, sig in ((1.0, signal.SIGTERM), (3.0, signal.SIGINT), (6.0, signal.SIGTERM)):
        code, doc, err, took, _ = interrupt(args, fakes("healthy_8x_h100_sxm.toml"), at_s, sig)
        assert_incomplete(args + [f"@{at_s}s {sig.name}"], code, doc, err, took)
        keys = {c["key"] for c in doc["checks"]}
        # The report is complete: every selected check is there, run, cut short or not run.
        for k in ("gpu.fp_peak", "gpu.p2p", "gpu.burn"):
            assert k in keys, (at_s, sorted(keys))
        assert any(k == "order" or k.startswith("order.") for k in keys), sorted(keys)
        not_run = [c for c in doc["checks"] if c["summary"] == "not run: interrupted"]
        seen_not_run = seen_not_run or bool(not_run)
        assert all(c["verdict"] == "SKIP" for c in not_run), not_run
        # None only when the stop fell between two checks
        assert doc["interrupted_during"] in keys or doc["interrupted_during"] is None, doc["interrupted_during"]
    assert seen_not_run, "no run left checks out: the signals came too late to test 'not run: interrupted'"


def test_check_terminal_verdict_is_incomplete():
    p = start([a for a in check_args() if a != "--json"], fakes("healthy_8x_h100_sxm.toml"))
    time.sleep(2.0)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, (p.returncode, out, err)
    assert "Verdict: INCOMPLETE (interrupted" in out or "Verdict: COULD NOT RUN (interrupted" in out, out
    assert "Verdict: GO" not in out, out
    assert "Not run (interrupted):" in out, out
    assert out.rstrip().endswith("exit 3"), out


@slow
def test_burn_interrupted_is_incomplete():
    args = ["burn", "--duration", "60s", "--json"]
    for at_s, sig in ((1.0, signal.SIGTERM), (3.0, signal.SIGINT)):
        code, doc, err, took, _ = interrupt(args, fakes("burn_clean.toml"), at_s, sig)
        assert_incomplete(args + [f"@{at_s}s"], code, doc, err, took)
        burns = [c for c in doc["checks"] if c["key"] == "gpu.burn"]
        assert len(burns) == 2, burns
        assert all(c["verdict"] in ("PASS", "SKIP") for c in burns), burns


@slow
def test_bench_p2p_interrupted():
    args = ["bench", "p2p", "--json"]
    for at_s, sig in ((1.0, signal.SIGINT), (3.0, signal.SIGTERM)):
        code, doc, err, took, _ = interrupt(args, fakes("healthy_8x_h100_sxm.toml"), at_s, sig)
        assert_incomplete(args + [f"@{at_s}s"], code, doc, err, took)
        p2p = [c for c in doc["checks"] if c["key"] == "gpu.p2p"]
        assert len(p2p) == 1 and p2p[0]["verdict"] == "SKIP", p2p
        cut = [m for m in p2p[0]["measurements"] if m["absent_reason"] == "interrupted"]
        assert cut or "interrupted" in p2p[0]["summary"], p2p[0]


@slow
def test_bench_allreduce_interrupted():
    args = ["bench", "allreduce", "--json"]
    for at_s, sig in ((1.0, signal.SIGINT), (3.0, signal.SIGINT)):
        code, doc, err, took, _ = interrupt(args, fakes("healthy_8x_h100_sxm.toml"), at_s, sig)
        assert_incomplete(args + [f"@{at_s}s"], code, doc, err, took)
        ar = [c for c in doc["checks"] if c["key"] == "gpu.allreduce"]
        assert len(ar) == 1 and ar[0]["verdict"] == "SKIP", ar
        assert "interrupted" in ar[0]["summary"], ar[0]["summary"]


@slow
def test_bench_gemm_interrupted():
    args = ["bench", "gemm", "--json"]
    for at_s, sig in ((1.0, signal.SIGINT), (3.0, signal.SIGTERM)):
        # 8 GPUs of 1 GiB: a sweep of about 5 s per GPU on the fakes, inputs small in host memory.
        code, doc, err, took, _ = interrupt(args, fakes("gemm_8x_h100_1gib.toml"), at_s, sig)
        assert_incomplete(args + [f"@{at_s}s"], code, doc, err, took)
        gemms = [c for c in doc["checks"] if c["key"] == "gpu.gemm"]
        assert len(gemms) == 8, gemms  # one per GPU, the ones not reached say so
        assert any(c["summary"] == "not run: interrupted" for c in gemms), gemms
        cut = [m for c in gemms for m in c["measurements"] if m["absent_reason"] == "interrupted"]
        assert cut or any(c["summary"] == "not run: interrupted" for c in gemms), gemms


def test_host_storage_interrupted_leaves_no_file():
    data = tempfile.mkdtemp(prefix="gpuvet-e2e-sig-", dir=BUILD)  # the disk, not a tmpfs
    args = ["host", "storage", "--data-dir", data, "--storage-bytes", "1G", "--json"]
    for at_s, sig in ((0.5, signal.SIGINT), (1.5, signal.SIGTERM)):
        code, doc, err, took, _ = interrupt(args, {}, at_s, sig)
        assert_incomplete(args + [f"@{at_s}s"], code, doc, err, took)
        st = [c for c in doc["checks"] if c["key"] == "host.storage"]
        assert len(st) == 1, st
        # What completed is reported (the write, say); what the stop cut short is absent.
        cut = [m["key"] for m in st[0]["measurements"] if m["absent_reason"] == "interrupted"]
        assert st[0]["verdict"] == "SKIP" or cut, st
        assert os.listdir(data) == [], os.listdir(data)


def iperf_server(port):
    p = start(["host", "net", "--serve", "--bind", "127.0.0.1", "--port", str(port), "--json"], {})
    for _ in range(100):  # wait until the child listens
        if children_of(p.pid):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    return p


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def test_host_net_client_interrupted_kills_its_child():
    port = free_port()
    srv = iperf_server(port)
    try:
        args = ["host", "net", "--server", f"127.0.0.1:{port}", "--seconds", "5", "--json"]
        code, doc, err, took, kids = interrupt(args, {}, 1.5, signal.SIGINT, watch_children=True)
        assert kids, "the client had no iperf child at 1.5 s"
        assert_incomplete(args, code, doc, err, took)
        net = [c for c in doc["checks"] if c["key"] == "host.network"][0]
        assert net["verdict"] == "SKIP", net
        assert {m["key"]: m["absent_reason"] for m in net["measurements"]}["upload_gbitps"] == "interrupted", net
        assert not [k for k in kids if alive(k)], "an iperf child outlived the client"
    finally:
        srv.send_signal(signal.SIGINT)
        srv.communicate(timeout=30)


def test_killed_server_frees_its_port():
    port = free_port()
    srv = iperf_server(port)
    kids = children_of(srv.pid)
    assert kids, "the server had no iperf child"
    srv.kill()  # SIGKILL: gpuvet runs no cleanup at all
    srv.communicate(timeout=10)
    deadline = time.monotonic() + 2
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [k for k in kids if alive(k)], "the iperf server child outlived gpuvet"
    assert port_is_free(port), f"port {port} still taken after the server was killed"
    again = iperf_server(port)  # the next --serve starts on the same port
    try:
        assert again.poll() is None, again.communicate()
    finally:
        again.send_signal(signal.SIGINT)
        code = again.wait(timeout=30)
        assert code == 3, code  # a server that served nothing measured nothing


def test_killed_client_leaves_no_child():
    port = free_port()
    srv = iperf_server(port)
    try:
        cl = start(["host", "net", "--server", f"127.0.0.1:{port}", "--seconds", "5", "--json"], {})
        time.sleep(1.5)
        kids = children_of(cl.pid)
        assert kids, "the client had no iperf child"
        cl.kill()
        cl.communicate(timeout=10)
        deadline = time.monotonic() + 2
        while any(alive(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [k for k in kids if alive(k)], "the iperf client child outlived gpuvet"
    finally:
        srv.send_signal(signal.SIGINT)
        srv.communicate(timeout=30)


def test_second_sigint_exits_at_once_and_restores_the_terminal():
    # The scenario's contexts take 2 s to tear down, so after the first SIGINT the orderly stop
    # lasts at least that long whatever the machine's speed: the second one must cut it short.
    master, slave = pty.openpty()  # stderr on a terminal: progress lines are drawn there
    try:
        p = start(["burn", "--duration", "60s"], fakes("burn_slow_teardown.toml"), stderr=slave)
        os.close(slave)
        tty = harness.read_pty_until(master, b"s left", timeout_s=60)  # the burn is under way
        p.send_signal(signal.SIGINT)
        tty += harness.read_pty_until(master, b"stopping", timeout_s=10)
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        took = time.monotonic() - t
        tty += harness.drain_pty(master, idle_s=0.2)
    finally:
        os.close(master)
    assert p.returncode == 3, (p.returncode, out, tty[-500:])
    assert took < 0.5, f"the second SIGINT took {took:.2f} s"
    text = tty.decode(errors="replace")
    assert "interrupted again" in text, text[-500:]
    assert "passed" not in text[text.rfind("stopping"):], "a report was printed before the exit"
    tail = text[text.rfind("stopping"):]
    assert "\r\x1b[2K" in tail, repr(tail)  # the live line cleared before the exit


def test_orderly_stop_waits_for_the_gpu_teardown():
    # The reference for the test above: one SIGINT stops after the contexts are torn down and
    # prints the report of what was measured.
    p = start(["burn", "--duration", "60s"], fakes("burn_slow_teardown.toml"))
    time.sleep(3.0)
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - t
    assert p.returncode in (0, 1, 3), (p.returncode, err[-500:])
    assert took >= 2.0, f"the orderly stop took only {took:.2f} s against a 2 s teardown"
    assert "interrupted again" not in err, err[-500:]


def test_second_signal_removes_the_storage_file():
    data = tempfile.mkdtemp(prefix="gpuvet-e2e-sig2-", dir=BUILD)
    p = start(["host", "storage", "--data-dir", data, "--storage-bytes", "1G", "--json"], {})
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert p.returncode == 3, p.returncode
    assert os.listdir(data) == [], os.listdir(data)


def test_nothing_checked_could_not_run():
    for args in (["burn", "--duration", "5s"], ["bench", "memory"], ["bench", "p2p"]):
        code, out, err = run(*args, "--json", env=NO_DRIVER)
        doc = json.loads(out)
        assert code == 3 and doc["verdict"] == "COULD_NOT_RUN" and doc["exit_code"] == 3, (args, code, doc["verdict"])
        assert all(c["verdict"] == "SKIP" for c in doc["checks"]), doc["checks"]
        code, out, err = run(*args, env=NO_DRIVER)
        assert code == 3, (args, code)
        assert "Verdict: COULD NOT RUN (nothing was checked)" in out, out
        assert "Verdict: GO" not in out, out


if __name__ == "__main__":
    main(globals())
