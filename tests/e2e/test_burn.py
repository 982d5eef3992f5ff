"""gpuvet burn end to end: the real binary on the fake libcuda, NVML and cuBLASLt, short runs whose scenario
clock runs 10x the wall clock (time_scale), so "30 s into the burn" happens at 3 s."""
import json
import os
import signal
import subprocess
import tempfile
import time

from harness import main, run, run_json, slow
import harness

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
SCEN = os.path.join(TESTS, "fakes", "scenarios")


def env(name, cublaslt=True):
    return {
        "GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
        "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
        "GPUVET_CUBLASLT": os.path.join(FAKES, "libfakecublaslt.so") if cublaslt else "/nonexistent/libcublasLt.so",
        "GPUVET_FAKE_SCENARIO": os.path.join(SCEN, name),
    }


def burn(name, *extra, cublaslt=True):
    args = list(extra) if "--duration" in extra else ["--duration", "6s", *extra]
    code, doc, err = run_json("burn", *args, env=env(name, cublaslt))
    results = {c["gpu"]: c for c in doc["checks"] if c["key"] == "gpu.burn"}
    return code, doc, results, err


def details(r):
    findings = [f["verdict"] + ": " + f["text"] for f in r.get("findings", [])]
    return "\n".join(findings + r.get("details", [])) + "\n" + r["summary"]


def measurement(r, key):
    for m in r["measurements"]:
        if m["key"] == key:
            return m
    raise AssertionError(f"no measurement {key} in {r['measurements']}")


def test_bad_arguments_exit_2():
    for args in (["--duration", "ten"], ["--dtype", "int4"], ["--load", "disk"], ["--sample-hz", "50"],
                 ["--sample-hz", "0.5"], ["--gpus", "0,x"], ["--gpus", "7"]):
        code, out, err = run("burn", *args, env=env("burn_clean.toml"))
        assert code == 2, (args, code, err)
        assert err.strip(), args


@slow
def test_clean_run_passes_on_cublaslt():
    code, doc, r, err = burn("burn_clean.toml")
    assert sorted(r) == [0, 1], (r.keys(), err)
    for g in r.values():
        assert g["verdict"] == "PASS", details(g)
        assert "gemm bf16 8192x8192x8192" in g["summary"], g["summary"]
        # The fake cuBLASLt charges 790 TFLOPS for BF16: the event-timed rate equals it.
        assert abs(measurement(g, "throughput_tflops")["value"] - 790) < 1, measurement(g, "throughput_tflops")
        assert measurement(g, "results_checked_count")["value"] > 0
        # HBM at 71 C, 78 C from 20 s of scenario time (2 s of this 6 s run): the peak is the later one,
        # held against the GPU's own 95 C memory threshold.
        mt = measurement(g, "memory_temp_max_c")
        assert mt["value"] == 78 and mt["unit"] == "C", mt
        assert mt["reference"]["warn_above"] == 90, mt
        assert "(memory 78 °C)" in g["summary"], g["summary"]
    assert code == 0, err
    keys = {(s["key"], s.get("gpu")) for s in doc["series"]}
    assert ("burn.memory_temperature_c", 1) in keys, keys
    assert ("burn.temperature_c", 0) in keys and ("burn.throughput_tflops", 1) in keys, keys
    tput = [s for s in doc["series"] if s["key"] == "burn.throughput_tflops" and s.get("gpu") == 0][0]
    # 1 Hz aggregation: a 6 s run keeps about 5-6 points.
    assert 3 <= len(tput["values"]) <= 8, tput
    temp = [s for s in doc["series"] if s["key"] == "burn.temperature_c" and s.get("gpu") == 0][0]
    assert 4 <= len(temp["values"]) <= 9, temp


@slow
def test_sample_hz_raises_the_telemetry_rate():
    code, doc, r, err = burn("burn_clean.toml", "--sample-hz", "10", "--duration", "3s")
    temp = [s for s in doc["series"] if s["key"] == "burn.power_w" and s.get("gpu") == 1][0]
    assert len(temp["values"]) >= 20, len(temp["values"])
    assert code == 0, err


@slow
def test_without_cublaslt_fma_kernels_and_says_so():
    code, doc, r, err = burn("burn_clean.toml", "--duration", "4s", cublaslt=False)
    for g in r.values():
        assert g["verdict"] == "PASS", details(g)
        assert "fma bf16x2" in g["summary"], g["summary"]
        assert "cuBLASLt is not usable" in details(g), details(g)
        assert abs(measurement(g, "throughput_tflops")["value"] - 122) < 0.5
    assert code == 0, err


@slow
def test_memory_and_mixed_loads_pass():
    for load, unit in (("memory", "GB/s"), ("mixed", "TFLOPS")):
        code, doc, r, err = burn("burn_memory_load.toml", "--duration", "3s", "--load", load)
        for g in r.values():
            assert g["verdict"] == "PASS", (load, details(g))
        keys = {s["key"] for s in doc["series"]}
        assert "burn.memory_gbps" in keys or "burn.throughput_gbps" in keys, (load, keys)
        assert code == 0, (load, err)


@slow
def test_hot_memory_warns_and_unsupported_memory_temperature_is_absent():
    code, doc, r, err = burn("burn_hot_memory.toml", "--duration", "3s")
    g0, g1 = r[0], r[1]
    assert g0["verdict"] == "WARN", details(g0)
    assert "memory peak 92 °C, within 5 °C of the 95 °C memory slowdown threshold" in g0["summary"], g0["summary"]
    assert measurement(g0, "memory_temp_max_c")["value"] == 92
    assert g1["verdict"] == "PASS", details(g1)
    mt = measurement(g1, "memory_temp_max_c")
    assert mt["value"] is None, mt
    assert mt["absent_reason"] == "this GPU does not report memory temperature (GDDR cards usually do not)", mt
    assert code == 0, err  # a WARN alone does not fail the run


@slow
def test_throttling_after_30s_fails_that_gpu():
    code, doc, r, err = burn("burn_throttle_30s.toml")
    assert r[1]["verdict"] == "FAIL", details(r[1])
    assert "HW slowdown" in details(r[1])
    assert r[0]["verdict"] == "PASS", details(r[0])
    assert code == 1


@slow
def test_a_thermal_dip_between_samples_fails_by_the_violation_counter():
    """A 0.2 s thermal slowdown between two 1 Hz telemetry samples: the finding gives the share of the
    time from the thermal violation counter, the series carry it with their origin."""
    code, doc, r, err = burn("burn_thermal_dip.toml")
    assert r[1]["verdict"] == "FAIL", details(r[1])
    text = details(r[1])
    assert "thermal slowdown held the clocks down" in text and "(violation counter," in text, text
    assert r[0]["verdict"] == "PASS", details(r[0])
    assert "SW power cap held the clocks down 100.0% of the time (violation counter)" in details(r[0]), details(r[0])
    held = [s for s in doc["series"] if s["key"] == "burn.throttled_thermal_pct" and s.get("gpu") == 1][0]
    assert held["origin"] == "violation counter differences", held
    # Each value covers the time since the sample before; the first one's, the 1 Hz interval.
    dt = [1.0] + [b - a for a, b in zip(held["t_s"], held["t_s"][1:])]
    held_s = sum(v / 100 * d for v, d in zip(held["values"], dt))
    assert abs(held_s - 0.2) <= 0.05, held
    power = [s for s in doc["series"] if s["key"] == "burn.power_w" and s.get("gpu") == 1][0]
    assert power["origin"].startswith("energy counter differences"), power
    m = measurement(r[1], "thermal_throttle_pct")
    assert 0 < m["value"] < 10 and m["unit"] == "%", m
    assert code == 1, err


@slow
def test_power_brake_fails():
    code, doc, r, err = burn("burn_power_brake.toml")
    assert r[0]["verdict"] == "FAIL" and "power brake" in details(r[0]), details(r[0])
    assert code == 1


@slow
def test_one_gpu_20_percent_slower_fails_alone():
    for dtype in ("bf16", "fp32"):
        code, doc, r, err = burn("burn_slow_gpu.toml", "--duration", "4s", "--dtype", dtype)
        assert r[1]["verdict"] == "FAIL", (dtype, details(r[1]))
        assert "peers" in details(r[1]), details(r[1])
        assert r[0]["verdict"] == "PASS" and r[2]["verdict"] == "PASS", (dtype, details(r[0]), details(r[2]))
        assert code == 1


@slow
def test_xid79_mid_run_fails():
    code, doc, r, err = burn("burn_xid79.toml")
    assert r[1]["verdict"] == "FAIL" and "Xid 79" in details(r[1]), details(r[1])
    assert r[0]["verdict"] == "PASS", details(r[0])
    xid = [s for s in doc["series"] if s["key"] == "burn.xid" and s.get("gpu") == 1]
    assert xid and xid[0]["values"] == [79], xid
    assert code == 1


@slow
def test_wrong_results_fail_that_gpu():
    for dtype in ("bf16", "fp32", "fp64"):
        code, doc, r, err = burn("burn_wrong_results.toml", "--duration", "3s", "--dtype", dtype)
        assert r[0]["verdict"] == "FAIL", (dtype, details(r[0]))
        assert measurement(r[0], "mismatch_count")["value"] > 0, dtype
        assert r[1]["verdict"] == "PASS", (dtype, details(r[1]))
        assert measurement(r[1], "mismatch_count")["value"] == 0
        assert code == 1


@slow
def test_check_runs_the_burn_last_of_the_gpu_checks():
    data = tempfile.mkdtemp(prefix="gpuvet-e2e-burn-check-")
    code, doc, err = run_json("check", "--quick", "--burn-duration", "2s", "--data-dir", data,
                              env=env("burn_slow_gpu.toml"))
    keys = [c["key"] for c in doc["checks"]]
    burns = [c for c in doc["checks"] if c["key"] == "gpu.burn"]
    assert len(burns) == 3, (keys, err)
    last_gpu = max(i for i, k in enumerate(keys) if k.startswith("gpu."))
    assert keys[last_gpu] == "gpu.burn", keys
    assert {c["gpu"]: c["verdict"] for c in burns}[1] == "FAIL", burns
    # The load runs for the asked 2 s; the upper bound is loose because a batch in flight at the end
    # finishes first, and a loaded or sanitized machine runs it slower (not a speed test).
    assert all(1.5 <= measurement(c, "load_duration_s")["value"] <= 6 for c in burns), burns
    assert code == 1, err


@slow
def test_sigint_leaves_a_complete_report():
    out = tempfile.mkdtemp(prefix="gpuvet-e2e-burn-")
    e = dict(os.environ)
    e.update(env("burn_clean.toml"))
    p = subprocess.Popen([harness.GPUVET, "burn", "--duration", "60s", "--report", out],
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    harness.check_no_crash(p.args[1:], p.returncode, stderr)
    assert time.monotonic() - t < 5, "the load did not stop promptly"
    # An interrupted run is never GO (docs/report-schema.md): INCOMPLETE, exit 3, although what ran passed.
    assert p.returncode == 3, (p.returncode, stderr)
    with open(os.path.join(out, "gpuvet-report.json")) as f:
        doc = json.load(f)
    assert doc["interrupted"] is True, doc.get("interrupted")
    assert doc["verdict"] in ("INCOMPLETE", "COULD_NOT_RUN"), doc["verdict"]  # the latter: stopped before a batch
    burns = [c for c in doc["checks"] if c["key"] == "gpu.burn"]
    assert len(burns) == 2, stderr
    assert any("interrupted after" in d for c in burns for d in c.get("details", [])), burns
    assert any(s["key"] == "burn.power_w" for s in doc["series"])
    assert os.path.exists(os.path.join(out, "gpuvet-report.txt"))


if __name__ == "__main__":
    main(globals())
