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



# ---- escape sequences in the fleet's and the history's output ------------------------------------------

def crafted_fleet(d):
    """A fleet folder whose file names and report fields carry escape sequences, raw HTML and forged
    table rows, with one unreadable report (its problem line quotes its path)."""
    base = identity_report(os.path.join(d, "base.json"))
    folder = os.path.join(d, "fleet")
    os.mkdir(folder)
    for i, name in enumerate(["node\x1b]0;TITLE\x07a", "node|b<img src=x onerror=alert(1)><script>", "node\x1b[8mc"]):
        doc = json.loads(json.dumps(base))
        doc["machine"]["hostname"] = f"host{i}" + HOSTILE
        with open(os.path.join(folder, name + ".json"), "w") as f:
            json.dump(doc, f)
    with open(os.path.join(folder, "node\x1b[2Jd\n| cell | break |.json"), "w") as f:
        f.write("{bad")
    return folder


def test_fleet_output_shows_escapes_and_html_never_obeys_them():
    with tempfile.TemporaryDirectory() as d:
        folder = crafted_fleet(d)
        for extra in ([], ["--nhc"]):
            code, out, err = run("compare", "--fleet", folder, *extra)
            assert code in (1, 3), (extra, code, out, err)
            assert "\x1b" not in out + err, (extra, out)
            assert "\\x1b]0;TITLE" in out and "\\x1b[8mc" in out, (extra, out)  # shown, not obeyed
            assert len([l for l in out.splitlines() if " | " in l and l.startswith("node")]) >= (4 if extra else 0)
        code, md, err = run("compare", "--fleet", folder, "--markdown")
        assert code in (1, 3), (code, err)
        assert "\x1b" not in md and "<script" not in md and "<img" not in md, md
        assert not any(l.startswith("| cell") or l.startswith("**PASS**") for l in md.splitlines()), md
        rows = [l for l in md.splitlines() if l.startswith("| node")]
        assert len(rows) == 4 + 1, rows  # the header row and one row per node: no forged row
        # A fleet of run reports: node names are file names too.
        runs = os.path.join(d, "runs")
        os.mkdir(runs)
        for name in ("r\x1b]0;PWNED\x07", "r\x1b[8mz"):  # the tag names a run report's node
            code, path, err = run_report(d, "x" + str(len(os.listdir(runs))), name, "import time; time.sleep(0.3)")
            assert code == 0, err
            os.rename(path, os.path.join(runs, name + ".json"))
        code, out, err = run("compare", "--fleet", runs)
        assert "\x1b" not in out + err and "\\x1b[8mz" in out and "\\x1b]0;PWNED" in out, out


def test_history_output_shows_what_the_database_holds_never_obeys_it():
    import sqlite3
    with tempfile.TemporaryDirectory() as d:  # the harness points GPUVET_HISTORY_DB at a private folder
        report = os.path.join(d, "a.json")
        identity_report(report)
        code, _, err = run("history", "import", report)
        assert code == 0, err
        # What another tool, or a damaged file, could have put into the database.
        db = sqlite3.connect(os.environ["GPUVET_HISTORY_DB"])
        db.execute("UPDATE box_ids SET value = ? WHERE kind = 'hostname'", ("host" + HOSTILE,))
        db.execute("UPDATE gpus SET name = ?, serial = ?", (HOSTILE, "S\x1b[8m1"))
        db.execute("UPDATE runs SET hostname = ?, driver_version = ?", ("host" + HOSTILE, "570\x1b]0;T\x07"))
        db.execute("UPDATE run_gpus SET name = ?, sku = ?", (HOSTILE, "h100\x1b[8m"))
        db.commit()
        db.close()
        code, doc, err = harness.run_json("history")
        assert code == 0, err
        box = doc["boxes"][0]["box"]
        for args in (["history"], ["history", "show", box], ["history", "diff", box]):
            code, out, err = run(*args)
            assert code in (0, 2), (args, code, err)
            assert "\x1b" not in out + err, (args, out)
        code, out, _ = run("history")
        assert "\\x1b]0;TITLE" in out or "\\x1b[8m" in out, out  # shown, not obeyed
        code, out, _ = run("history", "show", box)
        assert "\\x1b" in out, out


def test_styles_from_outside_lose_every_escape():
    # \x1b[8m (conceal) is a colour sequence in form: from a tag, an argument or a note it is shown.
    code, out, err = run("run", "--tag", "\x1b[8mhidden-tag", "--note", "\x1b[31mred-note", "--", PY, "-c",
                         "import sys", "\x1b[5m\x1b[1marg", env=NO_DRIVER)
    assert code == 0, err
    assert "\x1b[8m" not in err and "\x1b[31m" not in err and "\x1b[5m" not in err, err
    assert "\\x1b[8mhidden-tag" in err and "\\x1b[31mred-note" in err and "\\x1b[5m" in err, err
    # The driver's own strings (a GPU's name) are outside text as well.
    with open(os.path.join(os.environ["GPUVET_TEST_DIR"], "fakes", "scenarios", "healthy_1x_l4.toml")) as f:
        text = f.read().replace('name = "NVIDIA L4"', 'name = "NVIDIA L4\\u001b[8m hidden\\u001b]0;T\\u0007"')
    with tempfile.TemporaryDirectory() as d:
        scen = os.path.join(d, "l4.toml")
        with open(scen, "w") as f:
            f.write(text)
        env = dict(fake_env("healthy_1x_l4"), GPUVET_FAKE_SCENARIO=scen)
        for args in (["inventory"], ["top", "--once"], ["check", "--quick", "--only", "gpu.identity"]):
            code, out, err = run(*args, env=env)
            assert "\x1b" not in out + err, (args, out + err)
            assert "\\x1b[8m hidden" in out + err, (args, out + err)


# ---- paths that cannot hold a history database ------------------------------------------------------------

def test_history_database_must_be_a_file():
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "db.fifo")
        os.mkfifo(fifo)
        report = os.path.join(d, "a.json")
        identity_report(report)
        for path, what in [(fifo, "is a FIFO"), (d, "is a directory")]:
            for args in (["history", "--history-db", path], ["history", "import", report, "--history-db", path],
                         ["check", "--quick", "--only", "host.cpu", "--history-db", path],
                         ["run", "--history-db", path, "--", "true"]):
                code, out, err = run(*args, env=NO_DRIVER, timeout=60)
                assert code == 2, (args, code, err)
                assert what in err and "--no-history" in err and "--history-db" in err, (args, err)
            code, _, err = run("history", env={"GPUVET_HISTORY_DB": path})
            assert code == 2 and what in err, err
        assert kind(fifo) == stat.S_IFIFO and os.listdir(d) == sorted(os.listdir(d))  # nothing replaced


# ---- fixes that had no test: NO_COLOR, NaN results, SIGHUP, SIGKILL escalation, edited runs, full disks -----

def on_terminal(args, env):
    """Runs gpuvet with stdin, stdout and stderr on a pseudo-terminal; (exit code, what it wrote)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([harness.GPUVET, *args], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = harness.drain_pty(master).decode(errors="replace")
    os.close(master)
    p.wait(timeout=120)
    return p.returncode, out


def test_an_empty_no_color_keeps_the_colours():
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "a.json")
        identity_report(report)
        base = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        base["TERM"] = "xterm-256color"
        code, out = on_terminal(["report", report], dict(base, NO_COLOR=""))
        assert code == 0 and "\x1b[" in out, (code, out[:500])  # no-color.org: an empty value does not count
        code, out = on_terminal(["report", report], dict(base, NO_COLOR="1"))
        assert code == 0 and "\x1b[" not in out, (code, out[:500])


def test_a_nan_from_the_training_script_is_null_not_broken_json():
    src = os.path.join(os.path.dirname(os.environ["GPUVET_TEST_DIR"]), "src", "train")
    emit = ("import sys; sys.path.insert(0, %r); import train_bench as t; "
            "t.emit('RESULT', {'status': 'ok', 'run': {'images_per_s': float('nan'), 'x': [float('inf'), 1.5]}})" % src)
    p = subprocess.run([PY, "-c", emit], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    [line] = [l for l in p.stdout.splitlines() if l.startswith("GPUVET_RESULT ")]
    doc = json.loads(line[len("GPUVET_RESULT "):])  # strict JSON: no NaN token
    assert doc["run"]["images_per_s"] is None and doc["run"]["x"] == [None, 1.5], doc
    with tempfile.TemporaryDirectory() as d:
        code, r, _ = train_result(fake_python(d, "echo '" + line + "'"))
        assert r["verdict"] == "ERROR" and "not JSON" not in r["summary"], r


def test_sighup_stops_the_exporter_in_order():
    with ex.Exporter(None, "--interval", "0.2", env=fake_env("healthy_8x_h100_sxm")) as e:
        e.wait_healthy()
        code, err = e.stop(sig=signal.SIGHUP, limit_s=15)
        assert code == 0, err
        assert "stopping" in err and "gpuvet export: stopped" in err, err


def test_a_job_deaf_to_stop_signals_is_killed_at_the_third_and_the_summary_says_so():
    with tempfile.TemporaryDirectory() as d:
        mark = os.path.join(d, "started")
        p = subprocess.Popen([harness.GPUVET, "run", "--interval", "0.2", "--", "bash", "-c",
                              f"trap '' TERM INT HUP; touch {mark}; sleep 60"],
                             env={**os.environ, **NO_DRIVER}, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(mark) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert os.path.exists(mark), "the job never started"
            for _ in range(3):
                p.send_signal(signal.SIGTERM)
                time.sleep(1)
            _, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        assert p.returncode == 137, (p.returncode, err)
        assert "SIGTERM passed on to the job; a third stop signal kills it (SIGKILL)" in err, err
        assert "the job is still running; one more stop signal kills it (SIGKILL)" in err, err
        assert "third stop signal: sending SIGKILL to the job's processes" in err, err
        assert "the job outlasted two stop signals: at the third gpuvet sent SIGKILL to its processes" in err, err


def test_an_edited_run_report_is_refused():
    with tempfile.TemporaryDirectory() as d:
        code, path, err = run_report(d, "r", "boxA", "import time; time.sleep(0.3)")
        assert code == 0, err
        with open(path) as f:
            doc = json.load(f)
        for edit, words in [({"wall_s": -5}, "wall_s is negative"),
                            ({"exit_code": 0, "killed_by_signal": 9}, "killed_by_signal 9 with exit_code 0")]:
            bad = json.loads(json.dumps(doc))
            for k, v in edit.items():
                (bad["run"] if "run" in bad and k in bad["run"] else bad)[k] = v
            edited = os.path.join(d, "edited.json")
            with open(edited, "w") as f:
                json.dump(bad, f)
            for args in (["report", edited], ["compare", path, edited]):
                code, out, err = run(*args)
                assert code == 2 and "the file was edited" in err and words in err, (args, code, out, err)


def test_a_log_that_takes_nothing_is_exit_2_before_sampling():
    env = fake_env("healthy_8x_h100_sxm")
    with tempfile.TemporaryDirectory() as d:
        # A descriptor open for reading only, and one that is not open: neither takes a line.
        ro = os.open(os.path.join(d, "ro"), os.O_RDONLY | os.O_CREAT, 0o600)
        try:
            p = subprocess.run([harness.GPUVET, "top", "--log", f"/dev/fd/{ro}", "--interval", "0.2", "--duration", "2"],
                               env={**os.environ, **env}, capture_output=True, text=True, timeout=60, pass_fds=(ro,))
        finally:
            os.close(ro)
        assert p.returncode == 2 and "log" in p.stderr, (p.returncode, p.stderr)
        code, _, err = run("top", "--log", "/dev/fd/97", "--interval", "0.2", "--duration", "2", env=env, timeout=60)
        assert code == 2 and "not open" in err, (code, err)
        if os.geteuid() == 0:  # a full disk: /dev/full's device numbers, made in the private folder
            full = os.path.join(d, "myfull")
            os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            code, _, err = run("top", "--log", full, "--interval", "0.2", "--duration", "2", env=env, timeout=60)
            assert code == 2 and "No space left" in err, (code, err)
            assert kind(full) == stat.S_IFCHR

if __name__ == "__main__":
    main(globals())
