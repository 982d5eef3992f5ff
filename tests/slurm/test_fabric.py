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


def doubles_env():
    e = {k: v for k, v in harness.fake_env("fabric_2x_h100").items() if k != "GPUVET_FAKE_SCENARIO"}
    e["GPUVET_NCCL"] = os.path.join(os.environ["GPUVET_BUILD_DIR"], "tests", "fakes", "libfakenccl.so")
    return e


def allreduce(*args, nodes=NODES, command=("fleet", "allreduce"), timeout=300):
    """gpuvet fleet allreduce on `nodes` with --out: (exit code, stdout, stderr, fleet.json, folder)."""
    d = tempfile.mkdtemp(prefix="gpuvet-fabric-")
    argv = [harness.GPUVET, *command, "-N", str(len(nodes)), "-w", ",".join(nodes), "--gpus-per-node", "2",
            "--out", d, *args]
    p = subprocess.run(argv, env=CLUSTER.env(doubles_env()), capture_output=True, text=True, timeout=scaled(timeout))
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
    # (gpu.identity is left out: the scenario's GPUs have 1 GiB, the double's buffers being host memory.)
    code, out, err, doc, d = allreduce("--only", "host.fabric,gpu.pcie_link", "--allreduce",
                                       "--allreduce-max-size", "8M", command=("fleet", "check"))
    assert code == 1, (code, out, err)
    assert doc["command"] == "fleet check" and doc["fabric"]["result"]["verdict"] == "FAIL", doc["fabric"]
    assert status(doc) == {"n1": "GO", "n2": "NO-GO", "n3": "GO"}, doc["nodes"]
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
