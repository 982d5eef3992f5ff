"""host.fabric end to end: `gpuvet host fabric`, `check --only host.fabric` and `inventory` over the
fabric fixture trees (tests/fixtures/hosts/fabric_*, GPUVET_ROOT), in JSON, terminal, Markdown and HTML."""
import ctypes
import json
import os
import tempfile

from harness import NO_DRIVER, main, run, run_json

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(__file__), ".."))


# A library that loads everywhere, for GPUVET_LIBIBVERBS: these trees are then judged on sysfs alone.
LOADS = {"GPUVET_LIBIBVERBS": "libc.so.6"}


def tree(name):
    return {**NO_DRIVER, "GPUVET_ROOT": os.path.join(TESTS, "fixtures", "hosts", name)}


def verbs_loads():
    try:
        ctypes.CDLL("libibverbs.so.1")
        return True
    except OSError:
        return False


def fabric(doc):
    return next(c for c in doc["checks"] if c["key"] == "host.fabric")


def findings(check, verdict):
    return [f["text"] for f in check["findings"] if f["verdict"] == verdict]


def measured(check, key):
    return next(m for m in check["measurements"] if m["key"] == key)


def test_healthy_ndr_fabric_passes():
    code, doc, err = run_json("host", "fabric", env=tree("fabric_ib_8x400"))
    c = fabric(doc)
    if not verbs_loads():  # this machine lacks rdma-core: gpuvet must say so, and only that
        assert c["verdict"] == "FAIL" and len(findings(c, "FAIL")) == 1, c
        assert "libibverbs.so.1 cannot be loaded" in findings(c, "FAIL")[0]
        return
    assert code == 0, (code, err)
    assert c["verdict"] == "PASS", c["findings"]
    assert measured(c, "active_ports")["value"] == 8
    assert measured(c, "rdma_total_gbitps")["value"] == 3200
    assert measured(c, "mlx5_7_p1_rate_gbitps")["value"] == 400
    assert not findings(c, "WARN") and not findings(c, "FAIL")


def test_half_width_port_fails_and_is_named():
    code, doc, _ = run_json("host", "fabric", env={**tree("fabric_half_width"), **LOADS})
    c = fabric(doc)
    assert code == 1 and c["verdict"] == "FAIL"
    fails = findings(c, "FAIL")
    assert len(fails) == 1 and fails[0].startswith("mlx5_3 port 1 trained at 2X while its peers run 4X"), fails


def test_far_numa_nic_warns_with_the_gpu_and_nic():
    code, doc, _ = run_json("check", "--only", "host.fabric", env={**tree("fabric_far_numa"), **LOADS})
    c = fabric(doc)
    assert code == 0 and c["verdict"] == "WARN", c
    warns = findings(c, "WARN")
    assert len(warns) == 1 and "GPU 0000:3c:00.0 (NUMA 0)" in warns[0] and "mlx5_3, is on NUMA node 1" in warns[0]


def test_no_peermem_is_no_gpudirect_in_every_printer():
    env = {**tree("fabric_no_peermem"), **LOADS}
    with tempfile.TemporaryDirectory() as out:
        code, text, _ = run("check", "--only", "host.fabric", "--report", out, env=env)
        assert code == 1
        assert "no GPUDirect RDMA" in text, text
        md = open(os.path.join(out, "report.md")).read()
        html = open(os.path.join(out, "report.html")).read()
        doc = json.load(open(os.path.join(out, "gpuvet-report.json")))
    assert "no GPUDirect RDMA: nvidia-peermem is not loaded" in md
    assert "no GPUDirect RDMA: nvidia-peermem is not loaded" in html
    assert fabric(doc)["verdict"] == "FAIL"


def test_roce_with_dmabuf_passes_and_missing_verbs_library_fails():
    code, doc, _ = run_json("host", "fabric", env={**tree("fabric_roce"), **LOADS})
    c = fabric(doc)
    assert code == 0 and c["verdict"] == "PASS", c["findings"]
    assert measured(c, "gpudirect_rdma")["text"] == "DMA-BUF"
    assert measured(c, "mlx5_0_p1_mtu_bytes")["value"] == 9000
    code, doc, _ = run_json("host", "fabric", env={**tree("fabric_roce"), "GPUVET_LIBIBVERBS": "/nonexistent/libibverbs.so.1"})
    fails = findings(fabric(doc), "FAIL")
    assert code == 1 and len(fails) == 1 and "install libibverbs1 and ibverbs-providers" in fails[0], fails


def test_no_rdma_device_skips():
    code, doc, _ = run_json("host", "fabric", env=tree("two_socket_128"))
    c = fabric(doc)
    assert c["verdict"] == "SKIP" and "No RDMA device" in c["summary"]
    assert code == 3  # nothing was checked: never a pass


def test_inventory_lists_the_fabric():
    env = {**tree("fabric_half_width"), **LOADS}
    code, doc, _ = run_json("inventory", env=env)
    assert code == 0
    fab = doc["fabric"]
    assert fab["verdict"] == "FAIL"
    rows = {r["label"]: r["value"] for r in fab["rows"]}
    assert "200 Gb/sec (2X NDR)" in rows["mlx5_3 port 1"], rows
    assert rows["GPU 0000:18:00.0"].startswith("nearest NIC mlx5_0, same PCIe switch (PXB)"), rows
    assert fab["findings"][0].startswith("FAIL: mlx5_3 port 1 trained at 2X")
    code, text, _ = run("inventory", env=env)
    assert "RDMA fabric" in text and "mlx5_3 port 1" in text and "FAIL: mlx5_3" in text, text


if __name__ == "__main__":
    main(globals())
