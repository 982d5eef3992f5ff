"""gpu.gemm and gpu.allreduce end to end: the real gpuvet on the fake libcuda, NVML, cuBLASLt and NCCL."""
import atexit
import os
import shutil
import tempfile

from harness import main, run_json, slow

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
BASE = os.path.join(TESTS, "fakes", "scenarios", "gemm_2x_h100_small_memory.toml")
DATA_DIR = tempfile.mkdtemp(prefix="gpuvet-e2e-gemm-")
atexit.register(shutil.rmtree, DATA_DIR, ignore_errors=True)  # one per process: CTest runs each test alone


def env(scenario=BASE, **extra):
    e = {
        "GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
        "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
        "GPUVET_CUBLASLT": os.path.join(FAKES, "libfakecublaslt.so"),
        "GPUVET_NCCL": os.path.join(FAKES, "libfakenccl.so"),
        "GPUVET_FAKE_SCENARIO": scenario,
        "NCCL_ALGO": "",
    }
    e.update(extra)
    return e


def scenario_with(text):
    """The base scenario plus extra TOML lines, in a temporary file."""
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    with open(BASE) as b:
        base = b.read()
    head, _, rest = base.partition("[all]\n")
    extra_top, _, extra_all = text.partition("[all]\n")
    # A key given again replaces the base scenario's line (TOML forbids duplicates).
    overridden = {line.split("=")[0].strip() for line in extra_all.splitlines() if "=" in line}
    rest = "".join(line for line in rest.splitlines(True) if line.split("=")[0].strip() not in overridden)
    f.write(head + extra_top + "[all]\n" + extra_all + rest)
    f.close()
    return f.name


# The GPU checks of a delivery but the three measurements whose kernels the fake interprets (about
# 7 s of CPU per GPU for gpu.memory_bandwidth even on these small GPUs; test_gpu_measure.py covers
# them), and without host.: those measure this machine's own disk and memory for seconds per run
# and have their own tests (tests/host).
CHECKS = ("gpu.driver,gpu.identity,gpu.tenancy,gpu.health,gpu.pcie_link,gpu.nvlink,gpu.h2d_d2h,gpu.p2p,"
          "gpu.gemm,gpu.allreduce,gpu.burn,order")


def checks(e):
    # A 1 s burn: gpu.burn has its own tests (test_burn.py); 20 s per call would add minutes here.
    code, doc, err = run_json("check", "--quick", "--only", CHECKS, "--burn-duration", "1s", "--data-dir", DATA_DIR,
                              env=e)
    return code, {(c["key"], c.get("gpu")): c for c in doc["checks"]}, err


def measurement(check, key):
    for m in check["measurements"]:
        if m["key"] == key:
            return m
    raise AssertionError(f"no measurement {key} in {check}")


@slow
def test_healthy_gemm_passes_with_the_scenario_rates():
    code, c, err = checks(env())
    for gpu in (0, 1):
        g = c[("gpu.gemm", gpu)]
        assert g["verdict"] == "PASS", g
        for key, rate in [("tf32_tflops", 400), ("fp16_tflops", 780), ("bf16_tflops", 800),
                          ("fp8_tflops", 1500), ("int8_tops", 1450)]:
            v = measurement(g, key)["value"]
            assert abs(v - rate) / rate < 1e-3, (key, v)
        assert "outputs verified" in g["summary"], g["summary"]
        assert "libfakecublaslt.so" in measurement(g, "cublaslt")["text"], g
        # BF16 800 of the H100's 989.5 dense TFLOPS is 81%.
        assert "bf16 800 TFLOPS (81% of 990)" in g["summary"], g["summary"]


@slow
def test_wrong_gemm_results_fail():
    code, c, _ = checks(env(scenario_with("[all]\ngemm_wrong_results = true\n")))
    g = c[("gpu.gemm", 0)]
    assert g["verdict"] == "FAIL", g
    assert "WRONG" in g["summary"], g["summary"]
    # The wrong outputs are judged statements: FAIL findings on the precision's rate, not details.
    wrong = [f for f in g["findings"] if "wrong D(" in f["text"]]
    assert wrong and all(f["verdict"] == "FAIL" and f["measurement"].endswith(("_tflops", "_tops")) for f in wrong), g
    assert not any("wrong D(" in d for d in g["details"]), g["details"]
    assert code == 1


@slow
def test_slow_bf16_gemm_fails_against_the_datasheet():
    # 450 of 989.5 is 45%, below the 55% floor.
    code, c, _ = checks(env(scenario_with("[all]\ngemm_bf16_tflops = 450\n")))
    g = c[("gpu.gemm", 0)]
    assert g["verdict"] == "FAIL", g
    ref = measurement(g, "bf16_tflops")["reference"]
    assert abs(ref["fail_below"] - 989.5 * 0.55) < 0.01, ref


@slow
def test_missing_cublaslt_skips_with_advice():
    _, c, _ = checks(env(GPUVET_CUBLASLT="/nonexistent/libcublasLt.so.12"))
    g = c[("gpu.gemm", None)]
    assert g["verdict"] == "SKIP", g
    assert g["summary"] == ("libcublasLt not found: set GPUVET_CUBLASLT or install the CUDA toolkit / "
                            "pip install nvidia-cublas-cu12"), g["summary"]
    assert any("/nonexistent/libcublasLt.so.12" in d for d in g["details"]), g["details"]


@slow
def test_cublaslt_too_new_for_the_driver_is_not_used():
    _, c, _ = checks(env(scenario_with("[driver]\ncuda_version = 12020\ncublaslt_cuda_version = 13000\n")))
    g = c[("gpu.gemm", None)]
    assert g["verdict"] == "SKIP", g
    assert any("too new for the driver's CUDA 12.2" in d for d in g["details"]), g["details"]


@slow
def test_allreduce_busbw_computed_and_verified():
    # 4 GPUs at 400 GB/s bus bandwidth: algbw = busbw / (2*3/4) = 266.7 GB/s.
    code, c, _ = checks(env(_four_gpus(400)))
    a = c[("gpu.allreduce", None)]
    assert a["verdict"] == "PASS", a
    bus = measurement(a, "busbw_gbps")["value"]
    alg = measurement(a, "algbw_gbps")["value"]
    assert abs(bus - 400) < 0.5, bus
    assert abs(alg - 400 / 1.5) < 0.5, alg
    assert measurement(a, "gpus")["value"] == 4
    assert measurement(a, "algorithm")["text"] == "NCCL default (ring/tree/NVLS chosen by NCCL)"
    assert "all results verified" in a["summary"], a["summary"]
    assert sum("verified" in d for d in a["details"]) == 4, a["details"]  # 1, 4, 16, 64 MiB
    # 4 H100 SXM: the 8-GPU floor 460 scaled by 0.76.
    assert abs(measurement(a, "busbw_gbps")["reference"]["fail_below"] - 460 * 0.76) < 0.01


def _four_gpus(busbw):
    path = scenario_with(f"[all]\nnccl_busbw_gbps = {busbw}\n")
    with open(path) as f:
        text = f.read().replace("gpu_count = 2", "gpu_count = 4")
    with open(path, "w") as f:
        f.write(text)
    return path


@slow
def test_allreduce_below_the_floor_fails():
    _, c, _ = checks(env(_four_gpus(200)))
    a = c[("gpu.allreduce", None)]
    assert a["verdict"] == "FAIL", a


@slow
def test_allreduce_missing_nccl_skips_and_one_gpu_skips():
    _, c, _ = checks(env(GPUVET_NCCL="/nonexistent/libnccl.so.2"))
    a = c[("gpu.allreduce", None)]
    assert a["verdict"] == "SKIP" and a["summary"].startswith("libnccl not found"), a
    path = scenario_with("")
    with open(path) as f:
        text = f.read().replace("gpu_count = 2", "gpu_count = 1")
    with open(path, "w") as f:
        f.write(text)
    _, c, _ = checks(env(path))
    a = c[("gpu.allreduce", None)]
    assert a["verdict"] == "SKIP" and "at least 2 GPUs" in a["summary"], a


if __name__ == "__main__":
    main(globals())
