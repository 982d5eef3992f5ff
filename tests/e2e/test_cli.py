"""The command line as a user meets it: help, version, errors, exit codes, JSON, reports."""
import fcntl
import json
import os
import re
import subprocess
import tempfile
import time

import harness

from harness import NO_DRIVER, main, run, run_json, slow


def test_version():
    code, out, _ = run("--version")
    assert code == 0 and re.match(r"gpuvet \d+\.\d+\.\d+", out), out


def test_help_lists_only_working_commands_with_examples():
    code, out, _ = run("--help")
    assert code == 0
    assert "check" in out and "specs" in out and "Examples" in out
    for cmd in ["check", "specs"]:
        c, o, _ = run(cmd, "--help")
        assert c == 0 and "Examples" in o, (cmd, o)


def test_unknown_command_suggests_the_right_one():
    code, _, err = run("chek")
    assert code == 2
    assert "did you mean 'check'" in err, err


def test_unknown_option_suggests_the_right_one():
    code, _, err = run("check", "--jsn")
    assert code == 2
    assert "did you mean '--json'" in err, err


def test_quick_and_full_together_is_usage_error():
    for cmd in (["check"], ["bench", "memory"], ["host", "cpu"]):
        code, _, err = run(*cmd, "--quick", "--full")
        assert code == 2, (cmd, err)
        assert "--quick excludes --full" in err, err


def test_no_command_is_usage_error():
    code, _, err = run()
    assert code == 2 and "gpuvet" in err


@slow
def test_check_without_driver_skips_gpu_checks():
    code, out, _ = run("check", "--no-color", env=NO_DRIVER)
    # The host checks judge the machine running the tests (a loaded one may fail its STREAM or
    # storage floor): the exit code must be the one the verdict line's tally calls for.
    tally = re.search(r"(\d+) failed, \d+ skipped, (\d+) errors · exit (\d)", out)
    assert tally, out
    assert tally.group(2) == "0", out
    assert code == (1 if int(tally.group(1)) else 0) == int(tally.group(3)), (code, out)
    assert "no GPU driver found: NVIDIA (libcuda.so.1 could not be loaded:" in out, out
    assert "), AMD (libamd_smi.so could not be loaded:" in out, out
    assert re.search(r"SKIP\s+gpu\.driver", out), out
    assert re.search(r"PASS\s+host\.identity", out), out
    assert "\x1b[" not in out  # no colour when not a terminal


@slow
def test_check_json_is_valid_and_complete():
    code, doc, _ = run_json("check", env=NO_DRIVER)
    verdicts = {c["key"]: c["verdict"] for c in doc["checks"]}
    assert "ERROR" not in verdicts.values(), verdicts
    assert code == (1 if "FAIL" in verdicts.values() else 0), (code, verdicts)  # host verdicts: this machine's
    assert doc["schema_version"] == 3 and doc["command"] == "check"
    assert doc["machine"]["driver"]["present"] is False
    assert doc["machine"]["driver"]["absent_reason"].startswith("libcuda.so.1 could not be loaded")
    keys = {c["key"]: c for c in doc["checks"]}
    assert keys["gpu.driver"]["verdict"] == "SKIP"
    assert keys["host.identity"]["verdict"] == "PASS"
    for c in doc["checks"]:
        for m in c["measurements"]:
            # measured or absent with a reason, never both, never neither
            has = m["value"] is not None or "text" in m
            assert has != (m["absent_reason"] is not None), m


def test_report_dir_gets_complete_files():
    with tempfile.TemporaryDirectory() as d:
        out_dir = os.path.join(d, "nested", "out")
        # One check the machine cannot fail: the files are what this test is about.
        code, _, err = run("check", "--only", "host.identity", "--report", out_dir, env=NO_DRIVER)
        assert code == 0, (code, err)
        files = sorted(os.listdir(out_dir))
        assert "gpuvet-report.json" in files and "gpuvet-report.txt" in files, files
        assert not [f for f in files if f.startswith(".")], files  # no temporary leftovers
        with open(os.path.join(out_dir, "gpuvet-report.json")) as f:
            assert json.load(f)["command"] == "check"
        # The Markdown and the HTML page sit beside the JSON, written from the same report.
        with open(os.path.join(out_dir, "report.md")) as f:
            md = f.read()
        assert md.startswith("# gpuvet check: GO") and "`host.identity`" in md, md
        with open(os.path.join(out_dir, "report.html")) as f:
            assert "<code>host.identity</code>" in f.read()


def test_report_dir_unwritable_is_an_error_not_a_crash():
    # Found before anything is measured: a usage error (exit 2) with the fix, and fast.
    with tempfile.NamedTemporaryFile() as f:
        for bad in ("/proc/gpuvet-cannot-write", f.name, "/proc/self"):
            t0 = time.monotonic()
            code, out, err = run("check", "--report", bad, env=NO_DRIVER)
            assert code == 2, (bad, code, err)
            assert f"--report {bad}" in err and "→" in err, err
            assert out == "" and time.monotonic() - t0 < 5, (bad, out)


def test_concurrent_runs_cannot_mix_one_report_folder():
    with tempfile.TemporaryDirectory() as d:
        fd = os.open(d, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # as a running gpuvet holds it
            code, _, err = run("check", "--only", "host.identity", "--report", d, env=NO_DRIVER)
            assert code == 2 and "another gpuvet run" in err, (code, err)
            assert os.listdir(d) == []
        finally:
            os.close(fd)
        code, _, err = run("check", "--only", "host.identity", "--report", d, env=NO_DRIVER)
        assert code == 0, err
        assert sorted(os.listdir(d)) == ["gpuvet-report.json", "gpuvet-report.txt", "report.html", "report.md"]


def test_stdout_write_errors_fail_the_command():
    # A full disk or a closed stdout: the output is lost, so the command cannot say it succeeded.
    with open("/dev/full", "w") as full:
        p = subprocess.run([harness.GPUVET, "specs", "list"], stdout=full, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 3 and "standard output" in p.stderr, (p.returncode, p.stderr)
    p = subprocess.run([harness.GPUVET, "check", "--only", "host.identity", "--json"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env={**os.environ, **NO_DRIVER},
                       preexec_fn=lambda: os.close(1))
    assert p.returncode == 3 and "standard output is closed" in p.stderr, (p.returncode, p.stderr)
    # A reader that goes away (| head) ends the output quietly.
    p = subprocess.Popen([harness.GPUVET, "specs", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()
    p.wait(timeout=30)
    assert p.returncode == 0 and p.stderr.read() == b"", p.returncode


def test_usage_error_under_json_is_a_json_document():
    code, doc, err = run_json("specs", "compare", "h100")
    assert code == 2 and doc["fatal"]["kind"] == "usage", (code, doc)


def test_bad_specs_file_names_line_and_column():
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write('[[gpu]]\nkey = "x"\nname = "X"\nmemory_size_gib = "lots"\n')
    try:
        code, _, err = run("specs", "list", "--specs", f.name)
        assert code == 2, err
        assert f"{f.name}:4:" in err and "memory_size_gib" in err, err
        code, doc, _ = run_json("check", "--specs", f.name, env=NO_DRIVER)
        assert code == 2
        assert doc["fatal"]["kind"] == "input" and "memory_size_gib" in doc["fatal"]["message"]
    finally:
        os.unlink(f.name)


def test_missing_specs_file():
    code, _, err = run("specs", "list", "--specs", "/nonexistent.toml")
    assert code == 2 and "/nonexistent.toml" in err, err


def run_on_pty(term, *args):
    """Runs gpuvet with stdout and stderr on a pseudo-terminal; returns everything it wrote there."""
    import pty
    master, slave = pty.openpty()
    env = {**os.environ, **NO_DRIVER, "TERM": term}
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([harness.GPUVET, *args], stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = harness.drain_pty(master)
    p.wait(timeout=60)
    os.close(master)
    return p.returncode, out.decode(errors="replace")


def test_dumb_terminal_gets_no_escape_sequences():
    code, out = run_on_pty("xterm-256color", "check", "--only", "host.identity")
    assert "\x1b[" in out, "a capable terminal gets colour (else this test proves nothing)"
    code, out = run_on_pty("dumb", "check", "--only", "host.identity")
    assert code == 0 and "host.identity" in out, out
    assert "\x1b[" not in out, repr(out[:400])


def test_network_peer_problems_are_could_not_run_not_a_network_failure():
    code, _, err = run("host", "net", "--server", "no-such-host.invalid", "--seconds", "1")
    assert code == 2 and "cannot resolve host 'no-such-host.invalid'" in err, (code, err)
    code, _, err = run("check", "--only", "host.network", "--net-server", "no-such-host.invalid", env=NO_DRIVER)
    assert code == 2 and "--net-server" in err, (code, err)
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a port nothing listens on
    code, doc, _ = run_json("host", "net", "--server", f"127.0.0.1:{port}", "--seconds", "1")
    net = next(c for c in doc["checks"] if c["key"] == "host.network")
    assert code == 3 and net["verdict"] == "ERROR", (code, net)
    assert "nothing accepts iperf3 connections" in net["summary"], net["summary"]


if __name__ == "__main__":
    main(globals())
