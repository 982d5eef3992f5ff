"""The command line as a user meets it: help, version, errors, exit codes, JSON, reports."""
import json
import os
import re
import tempfile

from harness import NO_DRIVER, main, run, run_json


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


def test_check_without_driver_skips_gpu_checks():
    code, out, _ = run("check", "--no-color", env=NO_DRIVER)
    assert code == 0, out
    assert "no NVIDIA driver found (libcuda.so.1 could not be loaded:" in out, out
    assert re.search(r"SKIP\s+gpu\.driver", out), out
    assert re.search(r"PASS\s+host\.identity", out), out
    assert "\x1b[" not in out  # no colour when not a terminal


def test_check_json_is_valid_and_complete():
    code, doc, _ = run_json("check", env=NO_DRIVER)
    assert code == 0
    assert doc["schema_version"] == 2 and doc["command"] == "check"
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
        code, _, _ = run("check", "--report", out_dir, env=NO_DRIVER)
        assert code == 0
        files = sorted(os.listdir(out_dir))
        assert "gpuvet-report.json" in files and "gpuvet-report.txt" in files, files
        assert not [f for f in files if f.startswith(".")], files  # no temporary leftovers
        with open(os.path.join(out_dir, "gpuvet-report.json")) as f:
            assert json.load(f)["command"] == "check"


def test_report_dir_unwritable_is_an_error_not_a_crash():
    code, _, err = run("check", "--report", "/proc/gpuvet-cannot-write", env=NO_DRIVER)
    assert code == 3, (code, err)
    assert "cannot" in err and "→" in err, err


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


if __name__ == "__main__":
    main(globals())
