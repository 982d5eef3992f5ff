"""The GPU lineup people rent, through the driver test doubles: every healthy_* scenario (each file
cites where its driver values come from) passes identity, health, tenancy, PCIe and NVLink links
and the order in its '# expect:' line; a fault injected into each one fails the check that covers it.

Faults are appended as a [gpu.0] table, so a healthy scenario states its values in [all] only."""
import glob
import os
import re
import tempfile

import harness
from harness import main, run_json, slow

CHECKS = "gpu.identity,gpu.health,gpu.tenancy,gpu.pcie_link,gpu.nvlink,order"
SCEN = os.path.join(os.environ.get("GPUVET_TEST_DIR", "tests"), "fakes", "scenarios")


class Scenario:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-5]
        self.text = open(path).read()
        m = re.search(r"^# expect: (.+)$", self.text, re.M)
        assert m, f"{path} needs a '# expect: <order>' line (docs/order.md)"
        self.expect = m.group(1).strip()
        self.gpus = int(re.search(r"^gpu_count = (\d+)", self.text, re.M).group(1))
        assert "[gpu." not in self.text, f"{path}: healthy scenarios set [all] only (faults go in [gpu.0])"

    def key(self, k, default=None):
        m = re.search(rf"^{k} = (.+)$", self.text, re.M)
        return m.group(1).strip() if m else default

    def nvlinks(self):
        return int(self.key("nvlink_count", "18"))


SCENARIOS = [Scenario(p) for p in sorted(glob.glob(os.path.join(SCEN, "healthy_*.toml")))]


def env_for(path):
    build = os.environ["GPUVET_BUILD_DIR"]
    return {
        "GPUVET_LIBCUDA": f"{build}/tests/fakes/libfakecuda.so",
        "GPUVET_LIBNVML": f"{build}/tests/fakes/libfakenvml.so",
        "GPUVET_FAKE_SCENARIO": path,
    }


def check(path, expect, only=CHECKS):
    code, doc, err = run_json("check", "--quick", "--only", only, "--expect", expect, env=env_for(path))
    results = {}
    for c in doc["checks"]:
        results[(c["key"], c.get("gpu"))] = c
    return code, results, err


def with_fault(s, keys):
    """A copy of the scenario with `keys` (TOML lines) for GPU 0."""
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    f.write(s.text + "\n[gpu.0]\n" + keys + "\n")
    f.close()
    return f.name


def test_every_sku_of_the_lineup_has_a_healthy_scenario():
    names = {s.name for s in SCENARIOS}
    for sku in ("a100_sxm4_40gb", "a100_sxm4_80gb", "a100_pcie", "h100_pcie", "h100_nvl", "h200", "h20", "b200",
                "l40s", "l40", "l4", "a10", "a40", "t4", "v100", "rtx_4090", "rtx_3090", "rtx_a6000", "rtx_6000_ada",
                "h100_sxm_slice"):
        assert any(re.search(rf"_{sku}(_|$)", n) for n in names), (sku, sorted(names))


def allowed(s, r):
    """Why a non-PASS verdict is right for this healthy scenario, or None."""
    key, v, text = r["key"], r["verdict"], r["summary"] + " " + " ".join([f["text"] for f in r.get("findings", [])] + r.get("details", []))
    if key == "gpu.nvlink" and v == "SKIP" and ("has no NVLink" in text or "No NVLink bridge" in text):
        return "the SKU has no NVLink, or links only through an optional bridge this box lacks"
    if key == "gpu.health" and v == "WARN" and "ECC is off" in text and s.key("ecc_enabled") == "false":
        return "ECC off on a card that has it (the workstation default): bit flips go unnoticed"
    return None


@slow
def test_healthy_scenarios_pass_identity_health_tenancy_links_and_order():
    bad = []
    for s in SCENARIOS:
        code, rs, err = check(s.path, s.expect)
        keys = {k for k, _ in rs}
        for want in ("gpu.identity", "gpu.health", "gpu.tenancy", "gpu.pcie_link", "gpu.nvlink", "order.gpu_count",
                     "order.gpu_model", "order.gpu_memory"):
            if want not in keys:
                bad.append((s.name, want, "missing", err[-300:]))
        for (key, gpu), r in rs.items():
            if r["verdict"] != "PASS" and not allowed(s, r):
                bad.append((s.name, key, gpu, r["verdict"], r["summary"]))
        per_gpu = [g for (k, g) in rs if k == "gpu.identity"]
        if sorted(per_gpu) != list(range(s.gpus)):
            bad.append((s.name, "gpu.identity", per_gpu))
        if code != 0:
            bad.append((s.name, "exit code", code))
    assert not bad, "\n".join(map(str, bad))


def other_name(s):
    return "NVIDIA A100-SXM4-80GB" if "GeForce" in s.key("name", "") else "NVIDIA GeForce RTX 4090"


def other_id(s):
    return "0x20B2" if s.key("pci_device_id", "").upper() == "0X2684" else "0x2684"


def half_memory(s):
    if s.key("memory_total_bytes"):
        return f"memory_total_bytes = {int(s.key('memory_total_bytes')) // 2}"
    return f"memory_total_mib = {int(s.key('memory_total_mib', '81559')) // 2}"


def nvlink_down(s):
    n = s.nvlinks()
    # NVL pairs and PCIe bridges: a bridged card with every link down reads as "no bridge", so two links.
    links = [0, 1] if "NVL" in s.key("name", "") else list(range(n))
    return f"nvlink_down = {links}"


# (fault, check that must FAIL, TOML for GPU 0, applies to this scenario?, what the finding must say)
FAULTS = [
    ("name of another SKU", "gpu.identity", lambda s: f'name = "{other_name(s)}"', lambda s: True, "claims to be"),
    ("PCI id of another SKU", "gpu.identity", lambda s: f"pci_device_id = {other_id(s)}", lambda s: True, "PCI device id"),
    ("fewer SMs", "gpu.identity", lambda s: f"sm_count = {int(s.key('sm_count', '132')) - 8}", lambda s: True, "SMs"),
    ("half the memory", "gpu.identity", half_memory, lambda s: True, "smaller or cut-down"),
    ("half the memory", "order.gpu_memory", half_memory, lambda s: True, "less than"),
    ("a foreign process", "gpu.tenancy",
     lambda s: 'processes = [{ pid = 4242, used_memory_mib = 2048, name = "python3" }]', lambda s: True, "process"),
    ("uncorrectable ECC errors", "gpu.health", lambda s: "ecc_enabled = true\necc_volatile_uncorrected = 3",
     lambda s: s.key("ecc_supported") != "false", "uncorrectable"),
    ("hardware slowdown", "gpu.health", lambda s: 'clock_event_reasons = ["hw_slowdown"]', lambda s: True, "HW_SLOWDOWN"),
    ("PCIe link trained to x8", "gpu.pcie_link", lambda s: "pcie_width_current = 8", lambda s: True, "x8"),
    ("NVLink down on a multi-GPU box", "gpu.nvlink", nvlink_down,
     lambda s: s.gpus > 1 and s.nvlinks() > 0 and s.key("nvlink_down") is None, "inactive"),
]


@slow
def test_a_fault_in_any_sku_fails_its_check():
    bad, ran = [], 0
    for s in SCENARIOS:
        for what, key, toml, applies, says in FAULTS:
            if not applies(s):
                continue
            path = with_fault(s, toml(s))
            try:
                only = "order" if key.startswith("order.") else key
                code, rs, err = check(path, s.expect, only=only)
            finally:
                os.unlink(path)
            ran += 1
            r = rs.get((key, 0)) or rs.get((key, None))
            if r is None:
                bad.append((s.name, what, key, "no result", err[-300:]))
            elif r["verdict"] != "FAIL" or says not in r["summary"] + " ".join([f["text"] for f in r.get("findings", [])] + r.get("details", [])):
                bad.append((s.name, what, key, r["verdict"], r["summary"]))
            elif code != 1:
                bad.append((s.name, what, "exit code", code))
    assert not bad, "\n".join(map(str, bad))
    assert ran >= 8 * len(SCENARIOS), ran


def test_lone_sxm_gpu_with_nvlink_ordered_says_what_that_means():
    s = next(x for x in SCENARIOS if x.name.endswith("h100_sxm_slice"))
    code, rs, err = check(s.path, s.expect + ", nvlink")
    assert rs[("gpu.nvlink", 0)]["verdict"] == "PASS", rs[("gpu.nvlink", 0)]
    r = rs[("order.nvlink", None)]
    assert r["verdict"] == "WARN" and "one GPU" in r["summary"] and "between GPUs" in r["summary"], r
    assert code == 0, code


if __name__ == "__main__":
    main(globals())
