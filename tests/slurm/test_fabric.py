"""The all-reduce between nodes (gpuvet fleet allreduce, fleet check --allreduce) on a real Slurm: one
cluster for the module, nodes n1-n3 with two fake GPUs each. Every task gets its node's scenario
($T/scenarios/<node>.toml) and sysfs fixture (GPUVET_ROOT, tests/fixtures/hosts/fabric_*: the NICs
host.fabric reads and the NCCL double opens), so each node is a machine of its own: the NCCL double's
ranks are separate processes that meet through the id's folder and move real data.

Expectations: two GPUs per node use two of the fixture's 400G NICs, 2 x 47 GB/s = 94 GB/s busbw for
the whole job and each pair, 47 GB/s per rail (fabric_allreduce_judge.cpp); the double's healthy
figure is 0.93 x 50 GB/s = 46.5 per NIC ([fabric] efficiency, tests/fakes/README.md).
Run: python3 test_fabric.py build/gpuvet [test names]."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
import slurm_cluster  # noqa: E402
from slurm_cluster import scaled  # noqa: E402

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SCENARIO = os.path.join(TESTS, "fakes", "scenarios", "fabric_2x_h100.toml")
FIXTURES = os.path.join(TESTS, "fixtures", "hosts")
NODES = ("n1", "n2", "n3")
CLUSTER = None


def setup(roots=None, fabric=None):
    """Every node healthy (fabric_ib_8x400), then `roots` {node: fixture} and `fabric` {node: "[fabric]
    lines"} for the faulty ones."""
    for n in NODES:
        path = CLUSTER.path(f"scenario-{n}.toml")
        with open(SCENARIO) as src, open(path, "w") as dst:
            dst.write(src.read() + ("\n[fabric]\n" + fabric[n] + "\n" if fabric and n in fabric else ""))
        CLUSTER.set_scenario(n, path)
        CLUSTER.set_root(n, os.path.join(FIXTURES, (roots or {}).get(n, "fabric_ib_8x400")))


def doubles_env(verbs=False):
    """The doubles; `verbs`: the libibverbs double too (the RDMA write tests on the SDR fixtures; a file
    name picks a build of it), else no libibverbs at all (the double could not move 50 GB/s per NIC for
    real: the 400G fixtures' RDMA write is not measured, with that reason)."""
    e = {k: v for k, v in harness.fake_env("fabric_2x_h100").items() if k != "GPUVET_FAKE_SCENARIO"}
    e["GPUVET_NCCL"] = os.path.join(os.environ["GPUVET_BUILD_DIR"], "tests", "fakes", "libfakenccl.so")
    lib = verbs if isinstance(verbs, str) else "libfakeverbs.so"
    e["GPUVET_LIBIBVERBS"] = (os.path.join(os.environ["GPUVET_BUILD_DIR"], "tests", "fakes", lib)
                              if verbs else "/nonexistent/libibverbs.so.1")
    return e


def allreduce(*args, nodes=NODES, command=("fleet", "allreduce"), timeout=300, verbs=False):
    """gpuvet fleet allreduce on `nodes` with --out: (exit code, stdout, stderr, fleet.json, folder)."""
    d = tempfile.mkdtemp(prefix="gpuvet-fabric-")
    argv = [harness.GPUVET, *command, "-N", str(len(nodes)), "-w", ",".join(nodes), "--gpus-per-node", "2",
            "--out", d, *args]
    p = subprocess.run(argv, env=CLUSTER.env(doubles_env(verbs)), capture_output=True, text=True,
                       timeout=scaled(timeout))
    harness.check_no_crash(args, p.returncode, p.stderr)
    doc = json.load(open(os.path.join(d, "fleet.json"))) if os.path.exists(os.path.join(d, "fleet.json")) else None
    CLUSTER.wait_no_jobs()
    return p.returncode, p.stdout, p.stderr, doc, d


def figures(doc):
    """{measurement key: value} of the fabric's result."""
    return {m["key"]: m.get("value") for m in doc["fabric"]["result"]["measurements"]}


def findings(doc, verdict="FAIL"):
    return [f["text"] for f in doc["fabric"]["result"]["findings"] if f["verdict"] == verdict]


def status(doc):
    return {n["name"]: n["status"] for n in doc["nodes"]}


def test_a_healthy_fabric_passes_near_its_expectation():
    setup()
    code, out, err, doc, d = allreduce("--max-size", "32M")
    assert code == 0, (code, out, err)
    fab = doc["fabric"]
    assert fab["result"]["verdict"] == "PASS" and doc["fleet_verdict"] == "GO", fab["result"]
    f = figures(doc)
    # 2 NICs in use per node x 46.5 GB/s, against 2 x 47: within 2% of the expectation.
    for key in ("busbw_gbps", "pair_n1_n2_busbw_gbps", "pair_n2_n3_busbw_gbps", "pair_n3_n1_busbw_gbps"):
        assert abs(f[key] - 94) / 94 < 0.02, (key, f)
    for key in ("rail0_busbw_gbps", "rail1_busbw_gbps"):
        assert abs(f[key] - 47) / 47 < 0.02, (key, f)
    # Every size of the sweep was checked on every rank, and nothing was wrong.
    assert [r["bytes"] >> 20 for r in fab["sweep"]] == [8, 16, 32], fab["sweep"]
    assert all(r["wrong"] == 0 and r["checked"] >= 6 * 3 * 262144 for r in fab["sweep"]), fab["sweep"]
    for n in fab["nodes"]:
        assert n["network"] == "IB" and n["nccl_net"] == "IB", n
        assert n["net_channels"] > 0 and n["gdr_channels"] == n["net_channels"], n
        assert n["rdma_nics"] == 8 and n["nic_gbitps"] == 400, n
    assert fab["blamed"] == [] and status(doc) == {"n1": "GO", "n2": "GO", "n3": "GO"}, doc["nodes"]
    # Each rank's report and the NCCL log it read are kept.
    ranks = json.load(open(os.path.join(d, "ranks", "n2.json")))
    assert [r["local_rank"] for r in ranks] == [0, 1] and ranks[1]["fabric"]["rail_nic"] == "mlx5_1", ranks
    assert "Fabric  PASS" in out and "Fleet: GO" in out, out
    md = open(os.path.join(d, "fleet.md")).read()
    html = open(os.path.join(d, "fleet.html")).read()
    assert "## Fabric: PASS" in md and '<section id="fabric">' in html, md


def test_two_nodes_measure_the_whole_job_and_the_rails():
    setup()
    code, out, err, doc, _ = allreduce("--max-size", "8M", nodes=("n1", "n3"))
    assert code == 0, (code, out, err)
    f = figures(doc)
    # With two nodes the whole job is their one pair: no pair runs of its own.
    assert set(f) == {"pair_n1_n3_busbw_gbps", "rail0_busbw_gbps", "rail1_busbw_gbps"}, f
    assert [r["bytes"] >> 20 for r in doc["fabric"]["sweep"]] == [8], doc["fabric"]["sweep"]


def test_a_slow_rail_is_named_with_its_nic_and_the_node_that_has_it():
    setup(fabric={"n2": 'slow_nics = ["mlx5_1"]\nslow_nic_factor = 0.5'})
    code, out, err, doc, _ = allreduce("--max-size", "16M")
    assert code == 1, (code, out, err)
    f = figures(doc)
    assert abs(f["rail1_busbw_gbps"] - 23.25) < 0.5 and abs(f["rail0_busbw_gbps"] - 46.5) < 0.5, f
    fails = findings(doc)
    rail = [t for t in fails if t.startswith("rail 1")]
    assert rail and "mlx5_1 on n1, n2, n3" in rail[0], fails
    assert not any(t.startswith("rail 0") for t in fails), fails
    # The pairs with n2 are slow, the one without it is not: n2 is named, not the pairs.
    assert any(t.startswith("node n2 is the slow one: every slow pair includes it") for t in fails), fails
    assert status(doc) == {"n1": "GO", "n2": "NO-GO", "n3": "GO"}, doc["nodes"]
    assert doc["fabric"]["blamed"][0]["node"] == "n2", doc["fabric"]["blamed"]


def test_a_slow_node_is_named_as_the_culprit_of_its_pairs():
    setup(fabric={"n3": "node_factor = 0.55"})
    code, out, err, doc, _ = allreduce("--max-size", "16M")
    assert code == 1, (code, out, err)
    f = figures(doc)
    assert f["pair_n1_n2_busbw_gbps"] > 90 and f["pair_n2_n3_busbw_gbps"] < 55 and f["pair_n3_n1_busbw_gbps"] < 55, f
    fails = findings(doc)
    assert any(t.startswith("node n3 is the slow one: every slow pair includes it (n2+n3, n3+n1)") for t in fails), \
        fails
    assert status(doc) == {"n1": "GO", "n2": "GO", "n3": "NO-GO"}, doc["nodes"]
    # n3's best pair is the fleet's low outlier too.
    assert [(o["node"], o["metric"]) for o in doc["outliers"]] == [("n3", "fabric_busbw_gbps")], doc["outliers"]
    assert "n3 | ERROR: gpuvet: fabric.allreduce FAIL: node n3 is the slow one" in \
        [n["nhc"] for n in doc["nodes"]][2], doc["nodes"]


def test_rdma_that_cannot_be_opened_fails_to_initialise_instead_of_falling_back():
    # The containers were started without /dev/infiniband: asked for RDMA, NCCL cannot initialise.
    setup(roots={n: "fabric_no_uverbs" for n in NODES})
    code, out, err, doc, _ = allreduce("--max-size", "8M")
    assert code == 1, (code, out, err)
    fails = findings(doc)
    for n in NODES:
        text = [t for t in fails if t.startswith(f"NCCL on node {n} could not initialise its RDMA network")]
        assert text and "no verbs device in /dev/infiniband" in text[0], fails
    assert doc["fabric"]["result"]["verdict"] == "FAIL", doc["fabric"]["result"]
    assert all(n["network"] == "not initialised" for n in doc["fabric"]["nodes"]), doc["fabric"]["nodes"]
    assert status(doc) == {"n1": "NO-GO", "n2": "NO-GO", "n3": "NO-GO"}, doc["nodes"]


def test_the_silent_socket_fallback_is_named_when_rdma_is_not_asked_for():
    setup(roots={n: "fabric_no_uverbs" for n in NODES})
    code, out, err, doc, _ = allreduce("--max-size", "8M", "--allow-fallback")
    assert code == 1, (code, out, err)
    fails = findings(doc)
    for n in NODES:
        assert any(t.startswith(f"NCCL used sockets on a fabric with RDMA NICs: node {n} has 8 RDMA NIC(s)")
                   for t in fails), fails
    assert all(n["network"] == "Socket" and n["nccl_net"] is None for n in doc["fabric"]["nodes"]), \
        doc["fabric"]["nodes"]
    # The sums are still right: the data went through, slowly (2.5 GB/s over TCP).
    assert doc["fabric"]["sweep"][0]["wrong"] == 0 and figures(doc)["busbw_gbps"] < 3, doc["fabric"]


def test_a_node_without_gpudirect_rdma_is_named():
    setup(roots={"n1": "fabric_no_peermem"})
    code, out, err, doc, _ = allreduce("--max-size", "8M")
    assert code == 1, (code, out, err)
    fails = findings(doc)
    gdr = [t for t in fails if t.startswith("no GPUDirect RDMA on node")]
    assert len(gdr) == 1 and gdr[0].startswith("no GPUDirect RDMA on node n1:"), fails
    assert "(NCCL disabled it for mlx5_0, mlx5_1" in gdr[0] and "modprobe nvidia-peermem" in gdr[0], gdr
    n1 = [n for n in doc["fabric"]["nodes"] if n["node"] == "n1"][0]
    assert n1["gdr_channels"] == 0 and n1["net_channels"] > 0, n1
    assert status(doc)["n1"] == "NO-GO" and status(doc)["n2"] == "GO", doc["nodes"]


def test_fleet_check_with_allreduce_adds_the_fabric_to_the_verdict():
    setup(fabric={"n2": "node_factor = 0.55"})
    # (gpu.identity is left out: the scenario's GPUs have 1 GiB, the double's buffers being host memory.
    # The libibverbs double is there for host.fabric; its RDMA write cannot move 50 GB/s per NIC for
    # real, so it is left out here, and the fabric says so.)
    code, out, err, doc, d = allreduce("--only", "host.fabric,gpu.pcie_link", "--allreduce",
                                       "--allreduce-max-size", "8M", "--no-rdma-write", command=("fleet", "check"),
                                       verbs=True)
    assert code == 1, (code, out, err)
    assert doc["command"] == "fleet check" and doc["fabric"]["result"]["verdict"] == "FAIL", doc["fabric"]
    assert status(doc) == {"n1": "GO", "n2": "NO-GO", "n3": "GO"}, doc["nodes"]
    assert doc["fabric"]["rdma"] == [] and "RDMA write per NIC: left out (--no-rdma-write)" in doc["fabric"]["notes"]
    # host.fabric ran on every node (its RDMA total is one of the fleet's figures).
    assert "rdma_gbitps" in [m["id"] for m in doc["metrics"]], doc["metrics"]
    assert sorted(f for f in os.listdir(d) if f.endswith(".json")) == ["fleet.json", "n1.json", "n2.json",
                                                                       "n3.json"], os.listdir(d)


def test_bad_options_are_usage_errors_before_any_step():
    p = subprocess.run([harness.GPUVET, "fleet", "allreduce", "-N", "2", "--gpus-per-node", "2", "--max-size", "1K"],
                       env=CLUSTER.env(doubles_env()), capture_output=True, text=True, timeout=scaled(60))
    assert p.returncode == 2 and "--max-size 1K" in p.stderr, (p.returncode, p.stderr)
    p = subprocess.run([harness.GPUVET, "fleet", "allreduce", "-N", "2"], env=CLUSTER.env(doubles_env()),
                       capture_output=True, text=True, timeout=scaled(60))
    assert p.returncode == 2 and "--gpus-per-node" in p.stderr, (p.returncode, p.stderr)
    assert CLUSTER.jobs() == [], CLUSTER.jobs()


# The RDMA write per NIC (the ib_write_bw class): every rank writes from its rail's NIC to the next
# node's, through the libibverbs double, which moves every byte for real between the ranks' processes
# and paces them to the ports' data rate: 2.5 Gbit/s 1X SDR is 2 Gbit/s of data, 0.25 GB/s; the
# double reaches 0.98 of it ([fabric] write_efficiency), the pass line is 90% (0.225 GB/s).
SDR_GBPS = 0.25


def rdma_links(doc):
    return {(r["rail"], r["from_node"], r["to_node"]): r for r in doc["fabric"]["rdma"]}


def once_more_if_slow(test):
    """The double paces by the wall clock, and a rank starved of the CPU for longer than its 16
    writes in flight (64 ms at SDR) leaves its link idle: on a loaded 2-core machine a healthy link
    then reads below 90 %. A test of the figures runs a second time before it fails; a wrong verdict
    on two runs in a row is not noise."""
    def run():
        try:
            test()
        except AssertionError as first:
            print(f"retrying once after: {str(first)[:300]}")
            test()
    run.__name__ = test.__name__
    return run


@once_more_if_slow
def test_rdma_write_on_a_healthy_fabric_passes_at_the_ports_data_rate():
    setup(roots={n: "fabric_ib_sdr" for n in NODES})
    code, out, err, doc, d = allreduce("--max-size", "8M", verbs=True)
    assert code == 0, (code, out, err)
    links = rdma_links(doc)
    # A ring per rail: n1 -> n2 -> n3 -> n1, on mlx5_0 and mlx5_1.
    assert sorted(links) == [(0, "n1", "n2"), (0, "n2", "n3"), (0, "n3", "n1"), (1, "n1", "n2"), (1, "n2", "n3"),
                             (1, "n3", "n1")], links
    for (rail, a, b), r in links.items():
        assert r["from_nic"] == r["to_nic"] == f"mlx5_{rail}", r
        assert 0.9 * SDR_GBPS <= r["gbps"] <= SDR_GBPS and r["expected_gbps"] == SDR_GBPS, r
        assert r["memory"] == "GPU" and "nvidia-peermem" in r["memory_why"], r
        assert r["verified_bytes"] == 8 << 20 and r["wrong_bytes"] == 0, r
    f = figures(doc)
    assert 0.9 * SDR_GBPS <= f["rdma_rail1_n3_to_n1_gbps"] <= SDR_GBPS, f
    assert doc["fabric"]["result"]["verdict"] == "PASS" and "RDMA write: 6 link(s) measured" in \
        doc["fabric"]["result"]["summary"], doc["fabric"]["result"]
    assert "RDMA write per NIC" in out and "mlx5_1 on n3 -> mlx5_1 on n1" in out, out
    assert "RDMA write per NIC" in open(os.path.join(d, "fleet.md")).read()
    ranks = json.load(open(os.path.join(d, "ranks", "n2.json")))
    assert ranks[0]["rdma"]["to_node"] == "n3" and ranks[0]["rdma"]["bytes_written"] > 0, ranks[0]["rdma"]


@once_more_if_slow
def test_rdma_write_names_the_slow_nic_and_its_node():
    setup(roots={n: "fabric_ib_sdr" for n in NODES}, fabric={"n2": 'slow_nics = ["mlx5_1"]\nslow_nic_factor = 0.5'})
    code, out, err, doc, _ = allreduce("--max-size", "8M", verbs=True)
    assert code == 1, (code, out, err)
    links = rdma_links(doc)
    # Both links with n2's mlx5_1 run at half; the third link of the rail and rail 0 do not.
    for key in ((1, "n1", "n2"), (1, "n2", "n3")):
        assert links[key]["gbps"] < 0.55 * SDR_GBPS, links[key]
    for key in ((1, "n3", "n1"), (0, "n1", "n2"), (0, "n2", "n3"), (0, "n3", "n1")):
        assert links[key]["gbps"] >= 0.9 * SDR_GBPS, links[key]
    fails = findings(doc)
    rdma = [t for t in fails if t.startswith("rail 1: mlx5_1 on n2 is the slow or failing NIC")]
    assert rdma and "mlx5_1 on n1 -> mlx5_1 on n2" in rdma[0], fails
    assert not any(t.startswith("rail 0: RDMA") or t.startswith("rail 0: mlx5") for t in fails), fails
    assert ("n2", rdma[0]) in [(b["node"], b["finding"]) for b in doc["fabric"]["blamed"]], doc["fabric"]["blamed"]
    assert status(doc)["n2"] == "NO-GO" and status(doc)["n1"] == "GO", doc["nodes"]


def test_rdma_write_a_nic_that_cannot_connect_is_a_finding():
    setup(roots={n: "fabric_ib_sdr" for n in NODES}, fabric={"n2": 'fail_connect = ["mlx5_0"]'})
    code, out, err, doc, _ = allreduce("--max-size", "8M", nodes=("n1", "n2"), verbs=True)
    assert code == 1, (code, out, err)
    links = rdma_links(doc)
    assert links[(0, "n1", "n2")]["gbps"] is None and links[(0, "n2", "n1")]["gbps"] is None, links
    assert "the reading end mlx5_0 on n2 could not connect: ibv_modify_qp to RTR failed" in \
        links[(0, "n1", "n2")]["problem"], links
    assert "the writing end mlx5_0 on n2 could not connect" in links[(0, "n2", "n1")]["problem"], links
    # Rail 1 still writes (its speed is the healthy test's to judge).
    assert links[(1, "n1", "n2")]["gbps"] > 0 and links[(1, "n1", "n2")]["wrong_bytes"] == 0, links
    fails = findings(doc)
    rail0 = [t for t in fails if t.startswith("rail 0: RDMA write")]
    assert rail0 and "could not run" in rail0[0] and "(mlx5_0 on n1 or mlx5_0 on n2" in rail0[0], fails
    m = [x for x in doc["fabric"]["result"]["measurements"] if x["key"] == "rdma_rail0_n1_to_n2_gbps"]
    assert m and m[0].get("value") is None and "RTR" in m[0]["absent_reason"], m


def test_rdma_write_without_gpudirect_uses_host_memory_and_says_why():
    setup(roots={"n1": "fabric_ib_sdr_no_peermem", "n2": "fabric_ib_sdr", "n3": "fabric_ib_sdr"},
          fabric={"n2": "gdr = false"})
    code, out, err, doc, _ = allreduce("--max-size", "8M", nodes=("n1", "n2"), verbs=True)
    links = rdma_links(doc)
    n1, n2 = links[(0, "n1", "n2")], links[(0, "n2", "n1")]
    assert n1["memory"] == "host" and "neither nvidia-peermem nor DMA-BUF" in n1["memory_why"], n1
    # n2 has nvidia-peermem, but registering GPU memory is refused (GPUDirect RDMA broken).
    assert n2["memory"] == "host" and "ibv_reg_mr refused GPU memory" in n2["memory_why"], n2
    # From host memory the link is still measured, and every byte arrived.
    for r in (n1, n2):
        assert r["gbps"] > 0 and r["verified_bytes"] == 8 << 20 and r["wrong_bytes"] == 0, r


def verified_from_gpu_through_dmabuf(r):
    """GPU memory through DMA-BUF, and every byte that arrived read back from the reader's GPU memory
    (a double whose registered pages were not the GPU's would count them all wrong)."""
    assert r["memory"] == "GPU" and r["memory_why"] == "GPUDirect RDMA through DMA-BUF: GPU memory", r
    assert r["gbps"] > 0 and r["verified_bytes"] == 8 << 20 and r["wrong_bytes"] == 0, r


def test_rdma_write_without_peermem_writes_gpu_memory_through_dmabuf():
    # n1: the open kernel module on 6.5 and no nvidia-peermem (DMA-BUF); n2: nvidia-peermem.
    setup(roots={"n1": "fabric_ib_sdr_dmabuf", "n2": "fabric_ib_sdr", "n3": "fabric_ib_sdr"})
    code, out, err, doc, _ = allreduce("--max-size", "8M", nodes=("n1", "n2"), verbs=True)
    # The speed is the healthy test's to judge (a loaded machine slows the double's copies).
    assert code in (0, 1) and doc, (code, out, err)
    links = rdma_links(doc)
    for rail in (0, 1):
        verified_from_gpu_through_dmabuf(links[(rail, "n1", "n2")])
        n2 = links[(rail, "n2", "n1")]
        assert n2["memory"] == "GPU" and "nvidia-peermem" in n2["memory_why"], n2
        assert n2["verified_bytes"] == 8 << 20 and n2["wrong_bytes"] == 0, n2


def test_rdma_write_says_which_dmabuf_step_refused_and_writes_host_memory():
    # n1's driver refuses the export, n2's NIC driver refuses the registration, n3's GPU has no DMA-BUF.
    setup(roots={n: "fabric_ib_sdr_dmabuf" for n in NODES},
          fabric={"n1": 'dmabuf = "refused"', "n2": "dmabuf_mr = false", "n3": 'dmabuf = "unsupported"'})
    code, out, err, doc, _ = allreduce("--max-size", "8M", verbs=True)
    links = rdma_links(doc)
    n1, n2, n3 = links[(0, "n1", "n2")], links[(0, "n2", "n3")], links[(0, "n3", "n1")]
    assert n1["memory"] == "host" and n1["memory_why"] == (
        "cuMemGetHandleForAddressRange refused (CUDA_ERROR_NOT_SUPPORTED): driver older than 515, or a kernel "
        "without dma-buf: host memory"), n1
    assert n2["memory"] == "host" and n2["memory_why"].startswith("ibv_reg_dmabuf_mr refused the GPU's DMA-BUF") \
        and n2["memory_why"].endswith(": host memory"), n2
    assert n3["memory"] == "host" and "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0" in n3["memory_why"], n3
    for r in links.values():
        assert r["gbps"] > 0 and r["verified_bytes"] == 8 << 20 and r["wrong_bytes"] == 0, r


def test_rdma_write_with_a_libibverbs_without_dmabuf_writes_host_memory():
    setup(roots={n: "fabric_ib_sdr_dmabuf" for n in NODES})
    code, out, err, doc, _ = allreduce("--max-size", "8M", nodes=("n1", "n2"), verbs="libfakeverbs_rdmacore33.so")
    assert code in (0, 1) and doc, (code, out, err)
    links = rdma_links(doc)
    assert len(links) == 4, links
    for r in links.values():
        assert r["memory"] == "host" and "lacks ibv_reg_dmabuf_mr (rdma-core older than v34): host memory" in \
            r["memory_why"], r
        assert r["gbps"] > 0 and r["verified_bytes"] == 8 << 20 and r["wrong_bytes"] == 0, r


def test_rdma_write_without_libibverbs_is_a_reason_not_a_failure():
    setup(roots={n: "fabric_ib_sdr" for n in NODES})
    code, out, err, doc, _ = allreduce("--max-size", "8M", nodes=("n1", "n3"))
    assert code == 0, (code, out, err)
    links = rdma_links(doc)
    assert len(links) == 4 and all(r["gbps"] is None and r["problem"].startswith("no libibverbs")
                                   for r in links.values()), links
    assert not any(k.startswith("rdma_") for k in figures(doc)), figures(doc)
    notes = doc["fabric"]["notes"]
    assert any("mlx5_0 on n1 -> mlx5_0 on n3 not measured: no libibverbs" in n for n in notes), notes
    assert doc["fabric"]["result"]["verdict"] == "PASS", doc["fabric"]["result"]


def main():
    global CLUSTER
    missing = slurm_cluster.missing_binaries()
    if missing:
        print(f"FAIL: Slurm is not installed ({', '.join(missing)}): run scripts/install-deps --test")
        sys.exit(1)
    with slurm_cluster.Cluster(list(NODES), gpus_per_node=2) as c:
        CLUSTER = c
        harness.main(globals())


if __name__ == "__main__":
    main()
