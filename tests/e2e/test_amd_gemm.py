"""gpu.gemm on AMD GPUs end to end: the real gpuvet binary on the AMD SMI, HIP and hipBLASLt doubles,
with no NVIDIA driver. The hipBLASLt double runs on the HIP double's memory and simulated clock: every
output gpuvet reads back is the real product of the inputs it uploaded, and the rate timed with HIP
events equals the scenario's hipblaslt_tflops."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")


def amd(scenario, **extra):
    return harness.amd_kernel_env(scenario, ("libfakehipblaslt.so",), **extra)


def gemm(scenario, *args, **env):
    code, doc, err = harness.run_json("bench", "gemm", "--quick", *args, env=amd(scenario, **env))
    checks = [c for c in doc["checks"] if c["key"] == "gpu.gemm"]
    assert checks, (doc["checks"], err)
    return code, checks, err


def on_gpu(checks, gpu):
    return next(c for c in checks if c.get("gpu") == gpu)


def measurement(check, key):
    return next(m for m in check["measurements"] if m["key"] == key)


def test_healthy_mi300x_measures_fp16_and_bf16_against_the_datasheet_with_outputs_verified():
    code, checks, err = gemm("amd_gemm")
    assert code == 0 and len(checks) == 2, (code, [c["summary"] for c in checks], err)
    for c in checks:
        assert c["verdict"] == "PASS", (c["summary"], c["details"])
        for p in ("fp16", "bf16"):
            m = measurement(c, p + "_tflops")
            assert abs(m["value"] - 1000) < 0.5, m
            assert m["reference"]["spec"] == 1307.4, m["reference"]
        assert "fp16 1000 TFLOPS (76% of 1307)" in c["summary"] and "outputs verified" in c["summary"], c["summary"]
        # --quick in 448 MiB free: one shape per precision, 48 sampled outputs compared with the CPU
        for p in ("fp16", "bf16"):
            assert any(d.startswith(p + " 4096x4096x4096: 1000.0 TFLOPS") and d.endswith("48/48 sampled outputs correct")
                       for d in c["details"]), c["details"]
        assert measurement(c, "hipblaslt")["text"].endswith("libfakehipblaslt.so, hipBLASLt 0.10.0")
        # Not measured on AMD, each with its reason; never judged.
        assert "FNUZ" in measurement(c, "fp8_tflops")["absent_reason"]
        assert "NVIDIA's backend only" in measurement(c, "tf32_tflops")["absent_reason"]
        assert measurement(c, "int8_tops")["absent_reason"]


def test_a_slow_bf16_gemm_fails_naming_the_figure_and_the_datasheet_value():
    code, checks, err = gemm("amd_gemm_slow")
    assert on_gpu(checks, 0)["verdict"] == "PASS", on_gpu(checks, 0)["summary"]
    c = on_gpu(checks, 1)
    assert code != 0 and c["verdict"] == "FAIL", (code, c["summary"], err)
    assert "bf16 500 TFLOPS (38% of 1307)" in c["summary"], c["summary"]
    assert abs(measurement(c, "bf16_tflops")["value"] - 500) < 0.5


def test_wrong_gemm_outputs_fail_as_a_correctness_error_at_full_speed():
    code, checks, err = gemm("amd_gemm_wrong")
    assert on_gpu(checks, 0)["verdict"] == "PASS", on_gpu(checks, 0)["summary"]
    c = on_gpu(checks, 1)
    assert code != 0 and c["verdict"] == "FAIL", (code, c["summary"], err)
    # Every sampled output is 3 - the product; the rare one whose product is near 1.5 still passes.
    wrong = dict(part.split(" ") for part in c["summary"].split("(")[1].split(" sampled")[0].split(", "))
    assert set(wrong) == {"fp16", "bf16"}, c["summary"]
    assert all(int(w.split("/")[0]) >= 40 and w.endswith("/48") for w in wrong.values()), c["summary"]
    assert any("wrong D(" in f["text"] for f in c["findings"]), c["findings"]
    assert abs(measurement(c, "fp16_tflops")["value"] - 1000) < 0.5


def test_hipblaslt_absent_is_a_skip_with_the_advice_to_install_it():
    code, checks, err = gemm("amd_gemm", GPUVET_HIPBLASLT="/nonexistent/libhipblaslt.so.0")
    c = checks[0]
    assert c["verdict"] == "SKIP", (c["summary"], err)
    assert c["summary"].startswith("libhipblaslt not found: install hipblaslt (ROCm's libhipblaslt.so.0"), c["summary"]
    assert "GPUVET_HIPBLASLT" in c["summary"]
    assert any("/nonexistent/libhipblaslt.so.0" in d for d in c["details"]), c["details"]


def test_a_hung_hipblaslt_matmul_is_abandoned_at_the_driver_deadline():
    # hipblasLtMatmul never returns on GPU 1: the call is given up on (ten times the 0.5 s budget, a
    # call that waits for GPU work), GPU 1's result is an ERROR naming it, and gpuvet ends.
    code, checks, err = gemm("amd_gemm", "--no-history", GPUVET_FAKE_HANG="hipblasLtMatmul@1",
                             GPUVET_DRIVER_TIMEOUT_S="0.5")
    c = on_gpu(checks, 1)
    assert code == 3 and c["verdict"] == "ERROR", (code, c["summary"], err)
    assert "hipblasLtMatmul did not return in 5 s" in c["summary"] and "(hipBLAS status 31)" in c["summary"], \
        c["summary"]
    assert any("amdgpu" in d for d in c["details"]), c["details"]


harness.main(globals())
