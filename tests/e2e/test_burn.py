"""gpuvet burn end to end: the real binary on the fake libcuda and NVML, short runs whose scenario
clock runs 10x the wall clock (time_scale), so "30 s into the burn" happens at 3 s."""
import json
import os
import signal
import subprocess
import tempfile
import time

from harness import main, run, run_json
import harness

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
SCEN = os.path.join(TESTS, "fakes", "scenarios")


def env(name):
    return {
        "GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
        "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
        "GPUVET_CUBLASLT": "/nonexistent/libcublasLt.so",
        "GPUVET_FAKE_SCENARIO": os.path.join(SCEN, name),
    }


def burn(name, *extra):
    code, doc, err = run_json("burn", "--duration", "6s", "--dtype", "fp32", *extra, env=env(name))
    results = {c["gpu"]: c for c in doc["checks"] if c["key"] == "gpu.burn"}
    return code, doc, results, err


def details(r):
    return "\n".join(r.get("details", [])) + "\n" + r["summary"]


def test_bad_arguments_exit_2():
    for args in (["--duration", "ten"], ["--dtype", "int4"], ["--load", "disk"], ["--sample-hz", "50"],
                 ["--gpus", "0,x"]):
        code, out, err = run("burn", *args, env=env("burn_clean.toml"))
        assert code == 2, (args, code, err)
        assert err.strip(), args


def test_clean_run_passes():
    code, doc, r, err = burn("burn_clean.toml")
    assert sorted(r) == [0, 1], (r.keys(), err)
    for g in r.values():
        assert g["verdict"] == "PASS", details(g)
    assert code == 0, err
    keys = {(s["key"], s.get("gpu")) for s in doc["series"]}
    assert ("burn.temperature_c", 0) in keys and ("burn.throughput_tflops", 1) in keys, keys


def test_throttling_after_30s_fails_that_gpu():
    code, doc, r, err = burn("burn_throttle_30s.toml")
    assert r[1]["verdict"] == "FAIL", details(r[1])
    assert "HW slowdown" in details(r[1])
    assert r[0]["verdict"] == "PASS", details(r[0])
    assert code == 1


def test_power_brake_fails():
    code, doc, r, err = burn("burn_power_brake.toml")
    assert r[0]["verdict"] == "FAIL" and "power brake" in details(r[0]), details(r[0])
    assert code == 1


def test_xid79_mid_run_fails():
    code, doc, r, err = burn("burn_xid79.toml")
    assert r[1]["verdict"] == "FAIL" and "Xid 79" in details(r[1]), details(r[1])
    xid = [s for s in doc["series"] if s["key"] == "burn.xid" and s.get("gpu") == 1]
    assert xid and xid[0]["values"] == [79], xid
    assert code == 1


def test_sigint_leaves_a_complete_report():
    out = tempfile.mkdtemp(prefix="gpuvet-e2e-burn-")
    e = dict(os.environ)
    e.update(env("burn_clean.toml"))
    p = subprocess.Popen([harness.GPUVET, "burn", "--duration", "60s", "--dtype", "fp32", "--report", out],
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    with open(os.path.join(out, "gpuvet-report.json")) as f:
        doc = json.load(f)
    assert doc["interrupted"] is True, doc.get("interrupted")
    burns = [c for c in doc["checks"] if c["key"] == "gpu.burn"]
    assert len(burns) == 2, stderr
    assert any("interrupted after" in d for c in burns for d in c.get("details", [])), burns
    assert any(s["key"] == "burn.power_w" for s in doc["series"])
    assert os.path.exists(os.path.join(out, "gpuvet-report.txt"))


if __name__ == "__main__":
    main(globals())
