"""Hostile and careless use, one test per class of defect (docs/reports.md "Output files",
docs/run.md, docs/export.md): output paths of every kind (device nodes and FIFOs made in a private
temporary folder, never the machine's own /dev), run reports of failed jobs in compare, a port shared by
two exporters, slow clients and SIGTERM among them, pipelined requests, descriptors a job could
inherit, a closed stdout under run, escape sequences and raw HTML from every source into every printer.
"""
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

import harness
import test_export as ex
from harness import NO_DRIVER, fake_env, main, run

PY = sys.executable
HOSTILE = '\x1b]0;TITLE\x07\x1b[2J\x1b[31m<script>alert("X")</script><img src=x onerror=alert(1)>\n| cell | break |\n**PASS** all good'


def identity_report(path, scenario="healthy_8x_h100_sxm"):
    code, out, err = run("check", "--quick", "--only", "gpu.identity,gpu.health", "--json", env=fake_env(scenario))
    assert code in (0, 1), (code, err)
    with open(path, "w") as f:
        f.write(out)
    return json.loads(out)


def kind(path):
    return stat.S_IFMT(os.lstat(path).st_mode)


class FifoReader(threading.Thread):
    """Opens a FIFO for reading (before gpuvet writes) and keeps what arrives."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = b""

    def run(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                time.sleep(0.02)
                continue
            if chunk:
                self.data += chunk
            elif self.data:
                break
            else:
                time.sleep(0.02)
        os.close(self.fd)


def test_output_paths_never_replace_devices_fifos_or_links():
    with tempfile.TemporaryDirectory() as d:
        a = os.path.join(d, "a.json")
        identity_report(a)
        fifo = os.path.join(d, "myfifo")
        os.mkfifo(fifo)
        # Nobody reads the FIFO: refused at once (exit 2), never replaced, never waited on.
        code, _, err = run("report", a, "-o", fifo, timeout=30)
        assert code == 2 and "no process is reading" in err, (code, err)
        assert kind(fifo) == stat.S_IFIFO
        reader = FifoReader(fifo)
        reader.start()
        code, _, err = run("report", a, "--markdown", "-o", fifo)
        reader.join(30)
        assert code == 0, err
        assert kind(fifo) == stat.S_IFIFO and reader.data.startswith(b"# gpuvet check"), reader.data[:80]
        if os.geteuid() == 0:
            node = os.path.join(d, "mynull")
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            code, _, err = run("report", a, "--html", "-o", node)
            assert code == 0 and kind(node) == stat.S_IFCHR, (code, err)
            full = os.path.join(d, "myfull")
            os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            code, _, err = run("report", a, "-o", full)
            assert code == 3 and "No space left" in err and kind(full) == stat.S_IFCHR, (code, err)
        # A link is followed: its target is replaced whole, the link stays.
        keep = os.path.join(d, "keep.txt")
        with open(keep, "w") as f:
            f.write("old")
        link = os.path.join(d, "out_link.html")
        os.symlink("keep.txt", link)
        code, _, err = run("report", a, "--html", "-o", link)
        assert code == 0 and os.path.islink(link), err
        with open(keep) as f:
            assert f.read().startswith("<!DOCTYPE html>")
        os.symlink("nowhere.txt", os.path.join(d, "dangling"))
        for bad, words in [(os.path.join(d, "dangling"), "does not exist"), (d, "directory")]:
            code, _, err = run("report", a, "-o", bad)
            assert code == 2 and words in err, (bad, code, err)
        assert not os.path.exists(os.path.join(d, "nowhere.txt"))
        leftovers = [n for n in os.listdir(d) if n.startswith(".")]
        assert not leftovers, leftovers


def run_report(d, name, tag, code_expr):
    folder = os.path.join(d, name)
    code, _, err = run("run", "--tag", tag, "--interval", "0.1", "--report", folder, "--", PY, "-c", code_expr,
                       env=NO_DRIVER)
    return code, os.path.join(folder, "gpuvet-run.json"), err


def test_compare_never_ranks_a_failed_or_killed_job_faster():
    with tempfile.TemporaryDirectory() as d:
        code, ok, err = run_report(d, "r_ok", "boxA", "import time; time.sleep(1.0)")
        assert code == 0, err
        code, crash, _ = run_report(d, "r_crash", "boxB",
                                    "import sys; print('CUDA error: an illegal memory access'); sys.exit(1)")
        assert code == 1
        code, killed, _ = run_report(d, "r_kill", "boxK", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
        assert code == 137
        for other, words in [(crash, "boxB's job failed (exit 1)"), (killed, "boxK's job was killed by signal 9")]:
            code, out, err = run("compare", ok, other)
            assert code == 1, (code, out, err)
            assert "faster" not in out and "Not compared" in out and words in out, out
            assert "job end" in out and "exit 0" in out, out
            code, doc, err = harness.run_json("compare", other, ok)
            assert code == 1 and doc["faster"] is None and doc["speedup"] is None, doc
            assert doc["comparable"] is False and doc["exit_codes"][1] == 0, doc
            assert doc["exit_codes"][0] in (1, 137), doc


def test_a_second_exporter_on_the_same_port_is_exit_2():
    with tempfile.TemporaryDirectory() as tmp, ex.Exporter(ex.scenario_file(tmp)) as first:
        first.wait_healthy()
        code, _, err = run("export", "--listen", f"127.0.0.1:{first.port}", env=ex.env_for(ex.scenario_file(tmp)),
                           timeout=30)
        assert code == 2 and "already in use" in err, (code, err)
        assert first.get("/healthz")[0] == 200
        assert first.stop()[0] == 0


def trickler(port, stop):
    """A slow client: a request line, then one header line a second, never the end of the header."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    while not stop.is_set():
        try:
            s.sendall(b"X-Slow: 1\r\n")
        except OSError:
            break
        stop.wait(1.0)
    s.close()


def test_slow_clients_neither_starve_the_exporter_nor_hold_its_stop():
    with tempfile.TemporaryDirectory() as tmp, ex.Exporter(ex.scenario_file(tmp)) as e:
        e.wait_healthy()
        stop = threading.Event()
        slow = [threading.Thread(target=trickler, args=(e.port, stop), daemon=True) for _ in range(32)]
        half_open = [socket.create_connection(("127.0.0.1", e.port)) for _ in range(32)]  # send nothing
        for t in slow:
            t.start()
        time.sleep(1.5)
        for _ in range(4):
            assert e.get("/healthz", timeout=5)[0] == 200
            assert "DCGM_FI_DEV_GPU_UTIL" in e.metrics()
        t0 = time.monotonic()
        code, err = e.stop(limit_s=10)
        assert code == 0 and "stopped" in err, (code, err)
        assert time.monotonic() - t0 < 10
        stop.set()
        for s in half_open:
            s.close()


def test_pipelined_requests_are_answered_in_order():
    with tempfile.TemporaryDirectory() as tmp, ex.Exporter(ex.scenario_file(tmp)) as e:
        e.wait_healthy()
        with socket.create_connection(("127.0.0.1", e.port), timeout=10) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 3 +
                      b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
        assert statuses == [b"200", b"200", b"200", b"404"], data[:400]
        # A request with a body (smuggling) or a bare LF is refused, with no second answer.
        with socket.create_connection(("127.0.0.1", e.port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n")
            data = s.recv(65536)
        assert data.startswith(b"HTTP/1.1 400") and data.count(b"HTTP/1.1") == 1, data[:200]
        e.stop()


def test_loopback_short_forms_get_no_warning():
    with tempfile.TemporaryDirectory() as tmp:
        port = ex.free_port()
        p = subprocess.Popen([harness.GPUVET, "export", "--listen", f"127.1:{port}"],
                             env={**os.environ, **ex.env_for(ex.scenario_file(tmp))}, stderr=subprocess.PIPE,
                             text=True)
        line = p.stderr.readline()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=20)
        assert "other machines can reach" not in line + err and p.returncode == 0, (line, err)


def test_job_inherits_no_descriptor_of_gpuvet_and_closed_stdout_keeps_its_code():
    with tempfile.TemporaryDirectory() as d:
        rec = os.path.join(d, "rec.jsonl")
        script = ("import os\nfor n in os.listdir('/proc/self/fd'):\n    try: print(n, os.readlink('/proc/self/fd/' + n))\n"
                  "    except OSError: pass\n")
        code, _, err = run("run", "--record", rec, "--report", os.path.join(d, "r"), "--", PY, "-c", script,
                           env=NO_DRIVER)
        assert code == 0, err
        code, out, err = run("run", "--record", rec, "--", PY, "-c", script, env=NO_DRIVER)
        # Only what the test's own process passed down: never the record or the report folder.
        assert rec not in out and os.path.join(d, "r") not in out, out
        with open(rec) as f:
            for line in f:
                json.loads(line)
        # A closed stdout: the job's code, whatever it is, and --judge's.
        for job_code in (7, 0):
            p = subprocess.run(["bash", "-c", f'exec "$0" run -- bash -c "exit {job_code}" >&-', harness.GPUVET],
                               env={**os.environ, **NO_DRIVER}, capture_output=True, text=True, timeout=120)
            assert p.returncode == job_code, (job_code, p.returncode, p.stderr)


def test_record_target_is_judged_before_the_job_starts():
    with tempfile.TemporaryDirectory() as d:
        marker = os.path.join(d, "started")
        rec = os.path.join(d, "rec.jsonl")
        job = [PY, "-c", f"open({marker!r}, 'w')"]
        code, _, err = run("run", "--record", d, "--", *job, env=NO_DRIVER)
        assert code == 2 and "directory" in err and not os.path.exists(marker), (code, err)
        if os.geteuid() == 0:
            full = os.path.join(d, "myfull")
            os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            code, _, err = run("run", "--record", full, "--", *job, env=NO_DRIVER)
            assert code == 2 and "No space left" in err and not os.path.exists(marker), (code, err)
            assert kind(full) == stat.S_IFCHR
        # Two runs on one record file: the second is refused, the first's record stays whole.
        first = subprocess.Popen([harness.GPUVET, "run", "--interval", "0.1", "--record", rec, "--", PY, "-c",
                                  "import time; time.sleep(3)"], env={**os.environ, **NO_DRIVER},
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not os.path.exists(rec) or os.path.getsize(rec) == 0):
            time.sleep(0.05)
        code, _, err = run("run", "--record", rec, "--", *job, env=NO_DRIVER)
        assert code == 2 and "another process" in err and not os.path.exists(marker), (code, err)
        first.communicate(timeout=60)
        assert first.returncode == 0
        with open(rec) as f:
            lines = [json.loads(l) for l in f]
        assert lines[0]["record"] == "gpuvet-run-timeline" and len(lines) > 2


def no_escape(text, where):
    assert "\x1b]" not in text and "\x1b[2J" not in text and "\x07" not in text, (where, text[:2000])


def test_escape_sequences_and_raw_html_reach_no_printer():
    with tempfile.TemporaryDirectory() as d:
        doc = identity_report(os.path.join(d, "a.json"), "throttling")
        doc["machine"]["hostname"] = "host" + HOSTILE
        for c in doc["checks"]:
            c["summary"] = HOSTILE
        for g in doc.get("gpus", []):
            g["name"] = HOSTILE
        crafted = os.path.join(d, "crafted.json")
        with open(crafted, "w") as f:
            json.dump(doc, f)
        code, out, err = run("report", crafted)
        assert code == 0, err
        no_escape(out, "report")
        assert "\\x1b]0;TITLE" in out, out[:600]  # shown, not obeyed
        code, md, err = run("report", crafted, "--markdown")
        no_escape(md, "report --markdown")
        assert "<script" not in md and "<img" not in md, md
        assert not any(l.startswith("| cell") or l.startswith("**PASS**") for l in md.splitlines()), md
        code, html, err = run("report", crafted, "--html")
        assert "\x1b" not in html and "<script>alert" not in html
        # run: the job's arguments and --tag, in the summary, its report and compare.
        folders = []
        for name in ("r1", "r2"):
            folder = os.path.join(d, name)
            code, out, err = run("run", "--tag", "\x1b]0;PWNED\x07" + name, "--report", folder, "--", PY, "-c",
                                 "import sys", "\x1b[2J\x1b[H<script>x</script>", env=NO_DRIVER)
            assert code == 0, err
            no_escape(err, "run summary")
            folders.append(os.path.join(folder, "gpuvet-run.json"))
        code, out, err = run("compare", *folders)
        no_escape(out, "compare")
        code, md, err = run("report", folders[0], "--markdown")
        no_escape(md, "run --markdown")
        # The command is a code span, shown literally by every renderer; nowhere else may a tag open.
        assert "<script" not in re.sub(r"`[^`\n]*`", "", md), md


CPU = dict(NO_DRIVER, GPUVET_TRAIN_ALLOW_CPU="1")


def fake_python(d, body):
    path = os.path.join(d, "python")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body.replace("DIR", d) + "\n")
    os.chmod(path, 0o700)
    return path


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def train_result(py, env=CPU):
    code, doc, err = harness.run_json("bench", "train", "--python", py, env=env)
    [r] = [c for c in doc["checks"] if c["key"] == "gpu.train"]
    return code, r, err


def test_train_results_without_a_status_or_escaping_are_errors_and_daemons_do_not_survive():
    with tempfile.TemporaryDirectory() as d:
        code, r, _ = train_result(fake_python(d, 'echo "GPUVET_RESULT {}"'))
        assert r["verdict"] == "ERROR" and "lacks a status" in r["summary"] and code == 3, (code, r)
        esc = 'echo \'GPUVET_RESULT {"status": "error", "error_kind": "<unknown>", "message": "\\u001b]0;PWNED\\u0007cleared"}\''
        code, r, _ = train_result(fake_python(d, esc))
        assert r["verdict"] == "ERROR" and "cleared" in r["summary"] and code == 3, (code, r)
        code, out, err = run("bench", "train", "--python", fake_python(d, esc), env=CPU)
        no_escape(out + err, "bench train")
        # A daemon that left the benchmark's process group (setsid after a double fork).
        daemon = ('setsid sh -c \'sleep 43 & echo $! > DIR/pids\' & sleep 0.5; '
                  'echo \'GPUVET_RESULT {"status": "ok"}\'')
        train_result(fake_python(d, daemon))
        with open(os.path.join(d, "pids")) as f:
            pids = [int(p) for p in f.read().split()]
        assert pids and not any(alive(p) for p in pids), "a setsid daemon of the benchmark outlived gpuvet"
        code, r, err = train_result(fake_python(d, "sleep 1"), env=dict(CPU, GPUVET_TRAIN_WATCHDOG_S="abc"))
        assert r["verdict"] == "ERROR" and "GPUVET_TRAIN_WATCHDOG_S=abc" in r["summary"], r


def test_careless_options_are_exit_2_with_the_reason():
    env = fake_env("healthy_8x_h100_sxm")
    for args in (["export", "--gpus", "0,0,1"], ["top", "--once", "--gpus", "0,0"], ["run", "--gpus", "1,1", "--", "true"]):
        code, _, err = run(*args, env=env, timeout=60)
        assert code == 2 and "named twice" in err, (args, code, err)
    import pty
    for term in ("unknown-term-xyz", "dumb", ""):
        master, slave = pty.openpty()
        p = subprocess.Popen([harness.GPUVET, "top", "--duration", "3"], stdin=slave, stdout=slave, stderr=slave,
                             env={**os.environ, **env, "TERM": term})
        os.close(slave)
        out = harness.drain_pty(master).decode(errors="replace")
        os.close(master)
        p.wait(timeout=60)
        assert p.returncode == 2 and "--once" in out, (term, p.returncode, out[-500:])


if __name__ == "__main__":
    main(globals())
