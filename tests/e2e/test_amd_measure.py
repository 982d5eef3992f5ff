"""GPU measurements on AMD GPUs end to end: the real gpuvet binary on the AMD SMI and HIP doubles,
with no NVIDIA driver. The HIP double loads gpuvet's embedded gfx942 code object as HIP does and runs
the same kernels' OpenCL C sources on PoCL (the data is computed by the real kernels), charging
simulated time from the scenario, so measured figures equal the scenario's. The MI300X is held
against its row of the spec database (data/gpus.toml: its datasheet figures)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")


def amd(scenario, **extra):
    return harness.amd_kernel_env(scenario, ("libfakerccl.so",), **extra)


def bench(what, scenario, *args, **env):
    return harness.run_json("bench", what, "--quick", *args, env=amd(scenario, **env))


def by_gpu(doc, key):
    return {c["gpu"]: c for c in doc["checks"] if c["key"] == key}


def value(check, key):
    return next(m["value"] for m in check["measurements"] if m["key"] == key)


def measurement(check, key):
    return next(m for m in check["measurements"] if m["key"] == key)


@harness.slow  # PoCL runs STREAM over 79 MiB buffers and the FMA chains of 2048 work-items: ~20 s
def test_healthy_mi300x_passes_memory_fp_memtest_and_pcie_against_its_datasheet():
    code, doc, err = bench("memory", "amd_kernels_small_memory")
    assert code == 0, (code, err)
    checks = by_gpu(doc, "gpu.memory_bandwidth")
    assert sorted(checks) == [0, 1] and all(c["verdict"] == "PASS" for c in checks.values()), checks
    c = checks[0]
    assert abs(value(c, "copy_gbps") - 4500) < 0.5 and abs(value(c, "triad_gbps") - 4500) < 0.5
    ref = measurement(c, "copy_gbps")["reference"]
    assert ref["spec"] == 5300 and abs(ref["fail_below"] - 0.70 * 5300) < 1e-6, ref
    # 264 MiB free: three buffers of 0.9 * 264 / 3 MiB; the L2 as HIP reports it.
    assert value(c, "buffer_bytes") == (264 << 20) // 10 * 9 // 3 // 16 * 16
    assert value(c, "l2_cache_bytes") == 4 << 20
    assert value(c, "sm_clock_mhz") == 132  # AMD SMI's GFX clock, read after the run

    code, doc, err = bench("fp", "amd_kernels_small_memory")
    assert code == 0, (code, err)
    c = by_gpu(doc, "gpu.fp_peak")[1]
    assert c["verdict"] == "PASS", c["summary"]
    assert abs(value(c, "fp64_tflops") - 70) < 0.01 and abs(value(c, "fp32_tflops") - 140) < 0.01
    assert measurement(c, "fp32_tflops")["reference"]["spec"] == 163.4
    assert abs(value(c, "fp16_tflops") - 140) < 0.01
    bf16 = measurement(c, "bf16_tflops")
    assert bf16.get("value") is None and "gpu.gemm" in bf16["absent_reason"], bf16

    code, doc, err = bench("memtest", "amd_kernels_small_memory")
    checks = by_gpu(doc, "gpu.memtest")
    for c in checks.values():  # 8 MiB after the 256 MiB margin: far less than the 192 GiB sold
        assert c["verdict"] == "WARN" and c["summary"].startswith("no errors, but only"), c["summary"]
        assert value(c, "errors") == 0 and value(c, "tested_bytes") == 8 << 20
        assert any(m["label"] == "Memory total (AMD SMI)" for m in c["measurements"])

    code, doc, err = bench("pcie", "amd_kernels_small_memory")
    assert code == 0, (code, err)
    for c in by_gpu(doc, "gpu.h2d_d2h").values():
        assert c["verdict"] == "PASS", c["summary"]
        assert abs(value(c, "h2d_gbps") - 55) < 0.01 and abs(value(c, "d2h_gbps") - 55) < 0.01


@harness.slow  # as above, with the faults on GPU 1
def test_a_faulty_mi300x_fails_each_measurement_that_sees_its_fault():
    code, doc, err = bench("memory", "amd_kernels_faults")
    assert code == 1, (code, err)
    checks = by_gpu(doc, "gpu.memory_bandwidth")
    assert checks[0]["verdict"] == "PASS" and checks[1]["verdict"] == "FAIL", checks
    assert abs(value(checks[1], "copy_gbps") - 2200) < 0.5

    code, doc, err = bench("fp", "amd_kernels_faults")
    assert code == 1, (code, err)
    checks = by_gpu(doc, "gpu.fp_peak")
    assert checks[0]["verdict"] == "PASS", checks[0]["summary"]
    assert checks[1]["verdict"] == "FAIL" and "wrong FMA results" in checks[1]["summary"], checks[1]["summary"]
    assert "2048 of 2048" in checks[1]["summary"], checks[1]["summary"]

    code, doc, err = bench("memtest", "amd_kernels_faults")
    assert code == 1, (code, err)
    checks = by_gpu(doc, "gpu.memtest")
    assert checks[0]["verdict"] == "WARN", checks[0]["summary"]
    bad = checks[1]
    assert bad["verdict"] == "FAIL" and value(bad, "errors") == 1, bad["summary"]
    assert "byte offset 4096 of the memory tested" in bad["summary"], bad["summary"]


def test_a_gpu_without_a_code_object_is_an_error_naming_the_targets_built():
    code, doc, err = bench("memory", "amd_kernels_gfx940")
    assert code == 3, (code, err)
    c = by_gpu(doc, "gpu.memory_bandwidth")[0]
    assert c["verdict"] == "ERROR", c
    assert "no code object for this GPU's target gfx940" in c["summary"] and "gfx942" in c["summary"], c["summary"]
    assert any("GPUVET_AMDGPU_TARGETS" in d for d in c["details"]), c["details"]


def test_without_hip_the_kernel_measurements_skip_with_advice():
    code, doc, err = bench("memtest", "amd_kernels_small_memory", GPUVET_LIBHIP="/nonexistent/libamdhip64.so")
    assert code == 3, (code, err)
    c = by_gpu(doc, "gpu.memtest")[None]
    assert c["verdict"] == "SKIP" and c["summary"].startswith("HIP is unavailable"), c
    assert "install ROCm's HIP runtime" in c["summary"], c["summary"]


def test_without_amd_smi_or_nvidia_the_measurements_say_no_driver():
    code, doc, err = bench("memory", "amd_kernels_small_memory", GPUVET_LIBAMD_SMI="/nonexistent/libamd_smi.so")
    assert code == 3, (code, err)
    c = by_gpu(doc, "gpu.memory_bandwidth")[None]
    # Neither vendor's library lists a GPU: the summary says so for both (the gpu.driver check names them).
    assert c["verdict"] == "SKIP" and "no GPU driver found" in c["summary"], c
    d = doc["machine"]["driver"]
    assert d["present"] is False and "libamd_smi.so" in d["amd"]["absent_reason"], d


def burn(scenario, *args, **env):
    args = list(args) if "--duration" in args else ["--duration", "3s", *args]
    code, doc, err = harness.run_json("burn", *args, env=amd(scenario, **env))
    return code, doc, by_gpu(doc, "gpu.burn"), err


def burn_text(r):
    findings = [f["verdict"] + ": " + f["text"] for f in r.get("findings", [])]
    return "\n".join(findings + r.get("details", [])) + "\n" + r["summary"]


def series(doc, key, gpu):
    return next(s for s in doc["series"] if s["key"] == key and s.get("gpu") == gpu)


@harness.slow  # PoCL runs the FMA chains of 2048 work-items and STREAM over 105 MiB buffers: ~20 s
def test_burn_on_healthy_mi300x_passes_with_amd_smi_telemetry():
    code, doc, r, err = burn("amd_burn_healthy")
    assert code == 0, (code, err)
    assert sorted(r) == [0, 1], r
    for gpu, c in r.items():
        text = burn_text(c)
        assert c["verdict"] == "PASS", text
        # bf16 (the default) has no vector FMA on gfx942: the FP16 chain runs, and the report says so.
        assert "no BF16 FMA in the vector unit of gfx942" in text and "hipBLASLt" in text, text
        m = measurement(c, "throughput_tflops")
        assert m["label"] == "Mean throughput (fma f16x2)" and abs(m["value"] / 0.002 - 1) < 1e-3, m
        assert value(c, "results_checked_count") > 0 and value(c, "mismatch_count") == 0, c["measurements"]
        assert value(c, "nan_count") == 0
        # Telemetry from the AMD SMI double while the load ran: junction, HBM, power, the power-limit residency.
        peak = measurement(c, "temperature_peak_c")
        assert peak["value"] == 71 and peak["reference"]["fail_above"] == 105, peak
        assert "AMD SMI junction critical threshold" in peak["reference"]["source"], peak
        assert value(c, "memory_temp_max_c") == 60 and value(c, "power_peak_w") == 700, c["measurements"]
        assert abs(value(c, "power_cap_pct") - 2) < 0.01, c["measurements"]
        assert "SW power cap held the clocks down 2.0% of the time" in text, text
        # A signal AMD does not report as NVIDIA does is named with its reason, not passed off.
        assert "Xid events not watched: AMD GPUs: hardware errors are read from the RAS counters" in text, text
        temps = series(doc, "burn.temperature_c", gpu)
        assert len(temps["values"]) >= 2 and set(temps["values"]) == {71}, temps
    for dtype, kernel in (("fp32", "fma f32"), ("fp64", "fma f64")):
        code, doc, r, err = burn("amd_burn_healthy", "--duration", "2s", "--dtype", dtype, "--gpus", "0")
        assert code == 0 and r[0]["verdict"] == "PASS", (dtype, err, burn_text(r[0]))
        assert measurement(r[0], "throughput_tflops")["label"] == f"Mean throughput ({kernel})", r[0]
    code, doc, r, err = burn("amd_burn_healthy", "--load", "mixed", "--gpus", "1")
    assert code == 0 and r[1]["verdict"] == "PASS", (err, burn_text(r[1]))
    assert measurement(r[1], "throughput_tflops")["label"] == "Mean throughput (fma f16x2 + memory)", r[1]
    mem = series(doc, "burn.memory_gbps", 1)
    assert mem["values"] and all(abs(v - 4500) < 1 for v in mem["values"]), mem


@harness.slow  # four GPUs on PoCL
def test_burn_on_faulty_mi300x_fails_wrong_results_heat_and_a_slow_gpu():
    code, doc, r, err = burn("amd_burn_faults")
    assert code == 1, (code, err)
    assert r[0]["verdict"] == "PASS", burn_text(r[0])
    wrong = r[1]
    assert wrong["verdict"] == "FAIL" and value(wrong, "mismatch_count") > 0, burn_text(wrong)
    # Every work-item's low half is off by one: half of the FP16 lanes checked.
    assert 2 * value(wrong, "mismatch_count") == value(wrong, "results_checked_count"), wrong["measurements"]
    hot = burn_text(r[2])
    assert r[2]["verdict"] == "FAIL" and "thermal slowdown held the clocks down 40.0% of the time" in hot, hot
    assert "peak 104 °C, within 5 °C of the 105 °C slowdown threshold" in hot, hot
    assert abs(value(r[2], "thermal_throttle_pct") - 40) < 0.01, r[2]["measurements"]
    slow = burn_text(r[3])
    assert r[3]["verdict"] == "FAIL" and "peers" in slow, slow
    assert abs(value(r[3], "throughput_tflops") / 0.0016 - 1) < 1e-3, r[3]["measurements"]
    # Wrong results in every precision the burn runs.
    for dtype in ("fp32", "fp64"):
        code, doc, r, err = burn("amd_burn_faults", "--duration", "2s", "--dtype", dtype, "--gpus", "0,1")
        assert code == 1 and r[1]["verdict"] == "FAIL" and value(r[1], "mismatch_count") > 0, (dtype, err)
        assert r[0]["verdict"] == "PASS" and value(r[0], "mismatch_count") == 0, (dtype, burn_text(r[0]))


def test_burn_without_hip_skips_with_advice():
    code, doc, r, err = burn("amd_burn_healthy", GPUVET_LIBHIP="/nonexistent/libamdhip64.so")
    assert code == 3, (code, err)
    c = r[None]
    assert c["verdict"] == "SKIP" and "install ROCm's HIP runtime" in c["summary"], c


harness.main(globals())
