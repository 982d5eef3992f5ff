"""gpu.allreduce on AMD GPUs end to end: the real gpuvet binary on the AMD SMI, HIP and RCCL doubles,
with no NVIDIA driver. The RCCL double is the NCCL double's source built over the HIP double's memory
and simulated clock: every rank's result is the real sum of the ranks' buffers, and the bus bandwidth
measured from HIP events equals the scenario's rccl_busbw_gbps (the slowest rank's)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")


def amd(scenario, **extra):
    return harness.amd_kernel_env(scenario, ("libfakerccl.so",), **extra)


def allreduce(scenario, *args, **env):
    code, doc, err = harness.run_json("bench", "allreduce", "--quick", *args, env=amd(scenario, **env))
    checks = [c for c in doc["checks"] if c["key"] == "gpu.allreduce"]
    assert len(checks) == 1, doc["checks"]
    return code, checks[0], err


def value(check, key):
    return next(m for m in check["measurements"] if m["key"] == key).get("value")


def test_healthy_8x_mi300x_measures_the_scenarios_busbw_with_every_sum_verified():
    code, c, err = allreduce("amd_allreduce")
    assert code == 0 and c["verdict"] == "PASS", (code, c["summary"], err)
    assert abs(value(c, "busbw_gbps") - 310) < 0.01, c["measurements"]
    # busbw = algbw x 2(n-1)/n, n = 8
    assert abs(value(c, "algbw_gbps") - 310 * 8 / 14) < 0.01
    assert value(c, "gpus") == 8
    assert "libfakerccl.so" in next(m for m in c["measurements"] if m["key"] == "nccl")["text"]
    # 1, 4, 16 and 64 MiB: two 64 MiB buffers per GPU fit in 40 % of the 264 MiB free
    sizes = [d for d in c["details"] if "busbw" in d and d.endswith("verified")]
    assert [d.split(":")[0] for d in sizes] == ["1 MiB", "4 MiB", "16 MiB", "64 MiB"], c["details"]
    # No published all-reduce floor for the MI300X: the figure is reported, its speed not judged, and why.
    assert "speed not judged" in c["summary"], c["summary"]
    assert any("no published RCCL all-reduce floor for Instinct MI300X" in d and "7 xGMI links at 128 GB/s" in d
               for d in c["details"]), c["details"]
    assert next(m for m in c["measurements"] if m["key"] == "busbw_gbps")["reference"] is None


def test_a_slow_rccl_rank_is_measured_at_its_rate_and_reported_unjudged():
    code, c, err = allreduce("amd_allreduce_slow")
    assert abs(value(c, "busbw_gbps") - 120) < 0.01, (c["summary"], err)
    assert "busbw 120.0 GB/s at 64 MiB over 8 GPUs" in c["summary"], c["summary"]
    # No sourced floor to hold 120 GB/s against: no speed verdict, the reason in the details.
    assert c["verdict"] == "PASS" and "speed not judged" in c["summary"], c["summary"]
    assert any("no published RCCL all-reduce floor" in d for d in c["details"]), c["details"]


def test_a_wrong_sum_fails_as_a_correctness_error_at_full_speed():
    code, c, err = allreduce("amd_allreduce_wrong_sum")
    assert code != 0 and c["verdict"] == "FAIL", (code, c["summary"], err)
    # GPU 3's rank reads back every checked element wrong: 3 chunks of 256 Ki floats per size (1 MiB:
    # its 256 Ki floats three times), of 8 ranks' worth checked.
    assert "checked all-reduce results are WRONG" in c["summary"], c["summary"]
    wrong, checked = (int(x) for x in c["summary"].split(" checked")[0].split(" of "))
    assert checked == 4 * 8 * 3 * (256 << 10) and wrong == checked // 8, c["summary"]
    assert any(f["text"].startswith("64 MiB: ") and "WRONG" in f["text"] for f in c["findings"]), c["findings"]
    assert abs(value(c, "busbw_gbps") - 310) < 0.01


def test_rccl_absent_is_a_skip_with_the_advice_to_install_it():
    code, c, err = allreduce("amd_allreduce", GPUVET_RCCL="/nonexistent/librccl.so.1")
    assert c["verdict"] == "SKIP", (c["summary"], err)
    assert c["summary"].startswith("librccl not found: install rccl (ROCm's librccl.so.1"), c["summary"]
    assert any("/nonexistent/librccl.so.1" in d for d in c["details"]), c["details"]


def test_one_gpu_is_a_skip():
    code, c, err = allreduce("amd_allreduce", "--gpus", "0")
    assert c["verdict"] == "SKIP", (c["summary"], err)
    assert "all-reduce needs at least 2 GPUs, this run has 1" in c["summary"], c["summary"]


def test_a_hung_rccl_call_is_abandoned_at_the_driver_deadline():
    # ncclAllReduce never returns for GPU 2's rank: the call is given up on (ten times the 0.5 s budget,
    # a call that waits for GPU work), the check errors naming it, and gpuvet ends.
    code, c, err = allreduce("amd_allreduce", "--no-history", GPUVET_FAKE_HANG="ncclAllReduce@2",
                             GPUVET_DRIVER_TIMEOUT_S="0.5")
    assert code == 3 and c["verdict"] == "ERROR", (code, c["summary"], err)
    assert "ncclAllReduce did not return in 5 s" in c["summary"] and "(RCCL result 15)" in c["summary"], c["summary"]


harness.main(globals())
