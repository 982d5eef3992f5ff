"""gpuvet check on delivery, through the driver test doubles: every scenario ends in the verdicts and
the exit code a renter needs to see (issue: inventory and order verification)."""
from harness import NO_DRIVER, fake_env, main, run, run_json, slow

ORDER = "8x H100 SXM5 80GB"
# The GPU checks but the three measurements whose kernels the fake runs in its PTX interpreter:
# gpu.memory_bandwidth and gpu.memtest cannot be interpreted over these scenarios' 80 GiB GPUs, and
# gpu.fp_peak on 8 GPUs costs seconds per run. They have their own tests (test_gpu_measure.py, on
# small-memory scenarios); test_mig_gpus_skip_the_measurements_the_others_run adds gpu.fp_peak.
GPU_CHECKS = ("gpu.driver,gpu.identity,gpu.tenancy,gpu.health,gpu.pcie_link,gpu.nvlink,"
              "gpu.h2d_d2h,gpu.p2p,gpu.gemm,gpu.allreduce,gpu.burn")
# The checks drawn from the inventory, for the tests that judge what the driver reports (a degraded
# link, a re-badged card, a tenant, a remap, MIG, the count): the measurements run their kernels in
# the interpreter (p2p's verification alone takes about 30 s on 8 GPUs) and add nothing there.
INVENTORY_CHECKS = "gpu.driver,gpu.identity,gpu.tenancy,gpu.health,gpu.pcie_link,gpu.nvlink"
# The GPU checks less gpu.p2p, for the scenarios about the driver rather than the links between
# GPUs (an old driver, a GPU lost): the 8x8 copy matrix is judged by the healthy-box test.
GPU_CHECKS_BUT_P2P = GPU_CHECKS.replace("gpu.p2p,", "")


def check(scenario, *extra, old=False, expect=ORDER, checks=GPU_CHECKS):
    # A 1 s burn: gpu.burn has its own tests (test_burn.py); 20 s per scenario would add minutes.
    args = ["check", "--quick", "--only", checks + ",order", "--burn-duration", "1s"]
    if expect:
        args += ["--expect", expect]
    env = fake_env(scenario, old=old) if scenario else NO_DRIVER
    code, doc, err = run_json(*args, *extra, env=env)
    verdicts = {}
    for c in doc["checks"]:
        verdicts.setdefault(c["key"], {})[c["gpu"]] = c["verdict"]
    return code, doc, verdicts


def gpu_verdicts(verdicts, key):
    return verdicts.get(key, {})


def only_gpu_findings(verdicts):
    """Non-passing GPU and order results (host checks depend on the machine running the tests)."""
    out = {}
    for key, per_gpu in verdicts.items():
        if key.startswith("host."):
            continue
        for gpu, v in per_gpu.items():
            if v not in ("PASS", "SKIP"):
                out[(key, gpu)] = v
    return out


@slow
def test_healthy_box_passes_every_gpu_and_order_check():
    code, doc, v = check("healthy_8x_h100_sxm")
    findings = {k: x for k, x in only_gpu_findings(v).items() if k[0] not in ("gpu.gemm", "gpu.allreduce")}
    assert findings == {}, findings
    assert len(doc["gpus"]) == 8
    assert all(g["sku"] == "h100-sxm5-80gb" for g in doc["gpus"]), doc["gpus"]
    assert v["order.gpu_count"][None] == "PASS" and v["order.gpu_model"][None] == "PASS"


@slow
def test_card_trained_down_to_x8():
    code, _, v = check("pcie_x8_degraded", checks=INVENTORY_CHECKS)
    assert code == 1
    bad = [g for g, x in gpu_verdicts(v, "gpu.pcie_link").items() if x == "FAIL"]
    assert len(bad) == 1, v["gpu.pcie_link"]


@slow
def test_rebadged_card():
    code, _, v = check("rebadged", checks=INVENTORY_CHECKS)
    assert code == 1
    assert "FAIL" in gpu_verdicts(v, "gpu.identity").values(), v["gpu.identity"]
    assert v["order.gpu_model"][None] == "FAIL"


@slow
def test_foreign_process_holding_20gb():
    code, doc, v = check("foreign_process_20gb", checks=INVENTORY_CHECKS)
    assert code == 1
    assert "FAIL" in gpu_verdicts(v, "gpu.tenancy").values(), v["gpu.tenancy"]
    tenancy = [c for c in doc["checks"] if c["key"] == "gpu.tenancy" and c["verdict"] == "FAIL"][0]
    assert "GiB" in tenancy["summary"] or "process" in tenancy["summary"], tenancy["summary"]


def test_hidden_tenant_busy_gpu_with_no_process():
    code, doc, err = run_json("check", "--quick", "--only", "gpu.tenancy", env=fake_env("hidden_tenant"))
    results = {c["gpu"]: c for c in doc["checks"] if c["key"] == "gpu.tenancy"}
    assert sorted(results) == list(range(8)), results.keys()
    assert {g: c["verdict"] for g, c in results.items() if c["verdict"] != "PASS"} == {3: "FAIL"}, results
    summary = results[3]["summary"]
    assert "busy (mean 85%, max 85%) but shows no process" in summary, summary
    m = {x["key"]: x for x in results[3]["measurements"]}
    assert m["idle_utilization_mean_pct"]["value"] == 85 and m["idle_utilization_mean_pct"]["unit"] == "%", m
    assert m["idle_utilization_max_pct"]["value"] == 85, m
    assert {x["key"]: x["value"] for x in results[0]["measurements"]}["idle_utilization_max_pct"] == 0
    assert code == 1, err
    # The healthy box reads 0% everywhere and stays PASS.
    code, doc, err = run_json("check", "--quick", "--only", "gpu.tenancy", env=fake_env("healthy_8x_h100_sxm"))
    assert {c["verdict"] for c in doc["checks"]} == {"PASS"}, [c["summary"] for c in doc["checks"]]
    assert code == 0, err


@slow
def test_pending_row_remap():
    code, _, v = check("pending_row_remap", checks=INVENTORY_CHECKS)
    assert code == 1
    assert "FAIL" in gpu_verdicts(v, "gpu.health").values(), v["gpu.health"]


@slow
def test_mig_enabled_is_slicing():
    code, _, v = check("mig_enabled", checks=INVENTORY_CHECKS)
    assert code == 1
    assert "FAIL" in gpu_verdicts(v, "gpu.tenancy").values(), v["gpu.tenancy"]
    # An order that expects MIG accepts it.
    code, _, v = check("mig_enabled", expect=ORDER + ", mig", checks=INVENTORY_CHECKS)
    assert "FAIL" not in gpu_verdicts(v, "gpu.tenancy").values(), v["gpu.tenancy"]


@slow
def test_old_driver_without_newest_symbols_still_judges():
    code, doc, v = check("old_driver", old=True, checks=GPU_CHECKS_BUT_P2P)
    assert doc["machine"]["driver"]["present"] is True
    assert v["gpu.identity"][0] == "PASS", v["gpu.identity"]
    assert v["order.gpu_count"][None] == "PASS"
    # A CUDA 10.2 driver cannot run today's CUDA 12 framework builds: said, not failed.
    assert v["gpu.driver"][None] == "WARN", v["gpu.driver"]
    drv = next(c for c in doc["checks"] if c["key"] == "gpu.driver")
    assert "need driver 525 or newer" in drv["summary"], drv["summary"]


def test_nvml_present_but_kernel_driver_not_loaded():
    code, doc, v = check("kernel_driver_not_loaded")
    assert code == 1  # GPUs were ordered and none can be used
    assert v["order.gpu_count"][None] == "FAIL"
    assert v["gpu.driver"][None] in ("SKIP", "FAIL"), v["gpu.driver"]


def test_no_driver_at_all():
    code, doc, v = check(None)
    assert code == 1
    assert doc["machine"]["driver"]["absent_reason"].startswith("libcuda.so.1 could not be loaded")
    assert v["gpu.identity"][None] == "SKIP"
    assert v["order.gpu_count"][None] == "FAIL"
    code, doc, v = check(None, expect=None)
    # Without an order, a machine without GPUs is not a failure of the GPU checks (not 1), but nothing
    # was checked either: COULD NOT RUN, exit 3 (was 0, a pass).
    assert code == 3 and doc["verdict"] == "COULD_NOT_RUN", (code, doc["verdict"])


@slow
def test_gpu_lost_in_the_middle_of_the_inventory():
    code, doc, v = check("gpu_lost_mid_inventory", checks=GPU_CHECKS_BUT_P2P)
    assert code == 1
    lost = [g for g, x in gpu_verdicts(v, "gpu.identity").items() if x == "FAIL"]
    assert len(lost) == 1, v["gpu.identity"]
    assert sum(1 for x in gpu_verdicts(v, "gpu.identity").values() if x == "PASS") == 7


@slow
def test_count_mismatch_is_a_failure():
    code, _, v = check("healthy_8x_h100_sxm", expect="4x H100 SXM5 80GB", checks=INVENTORY_CHECKS)
    assert code == 1
    assert v["order.gpu_count"][None] == "FAIL"


def first_lines(out):
    """The scorecard's header: everything before the table of checks."""
    return out.split("CHECK", 1)[0]


def test_kernel_module_not_loaded_is_said_first_with_the_fix():
    code, out, err = run("check", "--no-color", "--only", "gpu.driver,gpu.identity,order", "--expect", ORDER,
                         env=fake_env("kernel_driver_not_loaded"))
    assert code == 1, err
    head = first_lines(out)
    assert "kernel module is not loaded" in head, out
    assert "modprobe nvidia" in head, out
    assert "no NVIDIA driver found" not in out, out
    code, doc, v = check("kernel_driver_not_loaded")
    assert v["gpu.driver"][None] == "FAIL", v["gpu.driver"]
    problems = doc["machine"]["driver"]["problems"]
    assert problems and problems[0]["headline"] == "the NVIDIA kernel module is not loaded", problems


def test_mig_on_every_gpu_is_named_not_taken_for_a_missing_driver():
    # cuInit finds no device; NVML sees the GPU in MIG mode: the checks judge it by NVML.
    code, doc, v = check("mig_every_gpu", expect="1x H100 SXM5 80GB")
    assert code == 1
    driver = doc["machine"]["driver"]
    assert driver["present"] is True and driver["cuda_usable"] is False, driver
    assert "MIG mode is on for GPU 0" in driver["problems"][0]["message"], driver["problems"]
    assert "nvidia-smi -i 0 -mig 0" in driver["problems"][0]["advice"], driver["problems"]
    assert v["gpu.driver"][None] == "WARN", v["gpu.driver"]
    assert v["gpu.identity"][0] == "PASS", v["gpu.identity"]
    assert v["gpu.tenancy"][0] == "FAIL", v["gpu.tenancy"]
    assert v["order.gpu_count"][None] == "PASS", v["order.gpu_count"]
    for c in doc["checks"]:
        assert "no NVIDIA driver" not in c["summary"], c
        if c["key"] in ("gpu.memory_bandwidth", "gpu.fp_peak", "gpu.memtest", "gpu.burn"):
            assert c["verdict"] == "SKIP" and "MIG" in c["summary"], c
    # MIG slices ordered: slicing is what was rented, so tenancy no longer fails for it.
    code, doc, v = check("mig_every_gpu", expect="1x H100 SXM5 80GB, mig")
    assert v["gpu.tenancy"][0] != "FAIL", v["gpu.tenancy"]


@slow
def test_mig_gpus_skip_the_measurements_the_others_run():
    code, doc, v = check("mig_enabled", checks=GPU_CHECKS + ",gpu.fp_peak")
    fp = v["gpu.fp_peak"]
    assert fp[0] == "SKIP" and fp[1] == "SKIP", fp
    assert all(fp[g] == "PASS" for g in range(2, 8)), fp
    assert doc["machine"]["driver"]["cuda_usable"] is True
    assert "GPUs 0, 1" in doc["machine"]["driver"]["problems"][0]["headline"]


def test_duration_is_the_time_the_run_took():
    code, doc, err = run_json("check", "--only", "gpu.burn", "--burn-duration", "2s", "--gpus", "0",
                              env=fake_env("healthy_8x_h100_sxm"))
    assert doc["duration_s"] >= 2.0, (doc["duration_s"], err)


def test_order_only_run_does_not_claim_no_gpu_was_checked():
    code, out, err = run("check", "--no-color", "--only", "order", "--expect", ORDER, env=fake_env("healthy_8x_h100_sxm"))
    verdict = [l for l in out.splitlines() if l.startswith("Verdict:")]
    assert code == 0 and verdict, (code, out, err)
    assert "host only" not in verdict[0] and "held to the order" in verdict[0], verdict


if __name__ == "__main__":
    main(globals())
