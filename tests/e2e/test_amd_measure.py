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
    env = dict(harness.NO_DRIVER)
    env.update({"GPUVET_LIBAMD_SMI": os.path.join(FAKES, "libfakeamdsmi.so"),
                "GPUVET_LIBHIP": os.path.join(FAKES, "libfakehip.so"),
                "GPUVET_FAKE_AMD_SCENARIO": os.path.join(TESTS, "fakes", "scenarios", scenario + ".toml"),
                "POCL_CACHE_DIR": os.path.join(BUILD, "pocl-cache")})
    # In the sanitized tree: PoCL's LLVM gives its worker threads an alternate signal stack from
    # malloc, which ASan would try to unmap as its own when the thread ends (a CHECK failure, not a
    # finding); gpuvet's own threads need no alternate stack for their reports.
    if "ASAN_OPTIONS" in os.environ:
        env["ASAN_OPTIONS"] = os.environ["ASAN_OPTIONS"] + ":use_sigaltstack=0"
    env.update(extra)
    return env


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


harness.main(globals())
