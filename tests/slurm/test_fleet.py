"""gpuvet fleet check on a real Slurm: one cluster (tests/slurm/slurm_cluster.py) for the whole
module, four nodes n1-n4 with two fake GPUs each in partition gpu, and n5 in partition broken, whose
gres.conf names regular files (Slurm drops them: the step gets no CUDA_VISIBLE_DEVICES). Each node's
driver doubles read $T/scenarios/<node>.toml (the cluster's TaskProlog exports it by SLURMD_NODENAME).
Run: python3 test_fleet.py build/gpuvet [test names]."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
import slurm_cluster  # noqa: E402

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SCENARIOS = os.path.join(TESTS, "fakes", "scenarios")
HEALTHY = os.path.join(SCENARIOS, "offer_healthy_2x_h100.toml")
ONLY = "gpu.identity,gpu.health,gpu.pcie_link"
CLUSTER = None


def faulty_scenario(path):
    """Two H100s, GPU 1 out of spare rows: gpu.health fails on it."""
    with open(path, "w") as f:
        f.write("gpu_count = 2\n[all]\n[gpu.1]\nremapped_rows_uncorrectable = 8\nremap_failure = true\n"
                "ecc_aggregate_uncorrected = 9\n")
    return path


def scenario_all(path):
    for n in ("n1", "n2", "n3", "n4", "n5"):
        CLUSTER.set_scenario(n, path)


def fleet(*args, timeout=300, env=None):
    """gpuvet fleet check ARGS against the test cluster: (exit code, stdout, stderr)."""
    e = {k: v for k, v in harness.fake_env("offer_healthy_2x_h100").items() if k != "GPUVET_FAKE_SCENARIO"}
    e.update(env or {})
    p = subprocess.run([harness.GPUVET, "fleet", "check", *args], env=CLUSTER.env(e), capture_output=True, text=True,
                       timeout=timeout)
    harness.check_no_crash(args, p.returncode, p.stderr)
    return p.returncode, p.stdout, p.stderr


def wait_no_steps(timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not CLUSTER.steps():
            return
        time.sleep(0.5)
    raise AssertionError(f"steps still running after {timeout_s} s: {CLUSTER.steps()}")


def allocation(nodes):
    """salloc --no-shell on `nodes`: the job id (scancel it at the end)."""
    r = CLUSTER.run("salloc", "--no-shell", "-w", nodes, "-N", str(len(nodes.split(","))), "-J", "vetting")
    assert r.returncode == 0, r.stderr
    return r.stderr.split("Granted job allocation")[1].split()[0]


def test_healthy_fleet_is_go_with_one_report_per_node_and_the_slurm_ids():
    scenario_all(HEALTHY)
    with tempfile.TemporaryDirectory() as d:
        code, out, err = fleet("-N", "3", "-w", "n1,n2,n3", "--gpus-per-node", "2", "--only", ONLY, "--out", d)
        assert code == 0, (code, out, err)
        assert sorted(os.listdir(d)) == ["fleet.html", "fleet.json", "fleet.md", "n1.json", "n2.json", "n3.json"], \
            os.listdir(d)
        doc = json.load(open(os.path.join(d, "fleet.json")))
        assert doc["command"] == "fleet check" and doc["fleet_verdict"] == "GO" and doc["exit_code"] == 0, doc
        assert [n["name"] for n in doc["nodes"]] == ["n1", "n2", "n3"], doc["nodes"]
        assert all(n["status"] == "GO" and n["nhc"] == n["name"] + " | Healthy" for n in doc["nodes"]), doc["nodes"]
        for name in ("n1", "n2", "n3"):
            rep = json.load(open(os.path.join(d, name + ".json")))
            s = rep["slurm"]
            assert s["node"] == name and s["job_id"].isdigit() and s["step_id"].isdigit(), s
            assert s["step_gpus"] == "0,1" and s["cuda_visible_devices"] == "0,1" and s["gpus_on_node"] == "2", s
            assert rep["verdict"] == "PASS" and len(rep["gpus"]) == 2, rep["verdict"]
        assert "n1" in out and "Fleet: GO" in out, out
        wait_no_steps()


def test_faulty_node_is_drained_an_operators_drain_is_kept_and_resume_after_repair():
    scenario_all(HEALTHY)
    CLUSTER.set_scenario("n2", faulty_scenario(CLUSTER.path("faulty.toml")))
    job = allocation("n1,n2,n3")
    try:
        CLUSTER.drain("n3", "PSU swap ticket 4711")  # an operator's drain, while the vetting job holds it
        env = {"SLURM_JOB_ID": job, "SLURM_JOB_NUM_NODES": "3"}
        code, out, err = fleet("--only", ONLY, "--nhc", "--drain", "--resume", env=env)
        assert code == 1, (code, out, err)
        lines = out.splitlines()
        assert lines[0] == "n1 | Healthy" and lines[2] == "n3 | Healthy", lines
        assert lines[1].startswith("n2 | ERROR: gpuvet: gpu.health GPU 1 FAIL"), lines
        state, reason = CLUSTER.node_state("n2")
        assert "DRAIN" in state and reason.startswith("gpuvet: gpu.health GPU 1 FAIL"), (state, reason)
        state, reason = CLUSTER.node_state("n3")
        assert "DRAIN" in state and reason == "PSU swap ticket 4711", (state, reason)
        assert "n3: not resumed: drained by someone else (PSU swap ticket 4711)" in err, err
        # The card is replaced: the same vetting allocation runs again and gives n2 back.
        CLUSTER.set_scenario("n2", HEALTHY)
        code, out, err = fleet("--only", ONLY, "--nhc", "--resume", env=env)
        assert code == 0, (code, out, err)
        state, reason = CLUSTER.node_state("n2")
        assert "DRAIN" not in state and reason == "", (state, reason)
        state, reason = CLUSTER.node_state("n3")
        assert "DRAIN" in state and reason == "PSU swap ticket 4711", (state, reason)
    finally:
        CLUSTER.run("scancel", job)
        CLUSTER.resume("n3")
        CLUSTER.resume("n2")
    CLUSTER.wait_idle(["n1", "n2", "n3"])


def test_without_drain_the_commands_are_printed_not_run():
    scenario_all(HEALTHY)
    CLUSTER.set_scenario("n4", faulty_scenario(CLUSTER.path("faulty.toml")))
    code, out, err = fleet("-w", "n1,n4", "-N", "2", "--only", ONLY)
    assert code == 1, (code, out, err)
    assert "n4: drain: gpuvet: gpu.health GPU 1 FAIL" in out and "(not done without --drain)" in out, out
    assert "scontrol update NodeName=n4 State=DRAIN 'Reason=gpuvet: gpu.health GPU 1 FAIL" in out, out
    state, reason = CLUSTER.node_state("n4")
    assert "DRAIN" not in state and reason == "", (state, reason)
    CLUSTER.set_scenario("n4", HEALTHY)


def test_a_hung_node_is_named_after_the_deadline_and_the_others_report():
    scenario_all(HEALTHY)
    fifo = CLUSTER.path("scenarios", "n3.toml")
    os.unlink(fifo)
    os.mkfifo(fifo)  # the doubles' nvmlInit blocks opening it: a driver that never answers
    try:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.monotonic()
            code, out, err = fleet("-N", "3", "-w", "n1,n2,n3", "--only", ONLY, "--node-timeout", "20s", "--out", d,
                                   "--json")
            assert code == 3, (code, out, err)
            doc = json.loads(out)
            by = {n["name"]: n for n in doc["nodes"]}
            assert by["n1"]["status"] == "GO" and by["n2"]["status"] == "GO", by
            assert by["n3"]["status"] == "ERROR", by["n3"]
            assert "did not finish within the node deadline of 20 s" in by["n3"]["problem"], by["n3"]
            assert sorted(f for f in os.listdir(d) if f.startswith("n")) == ["n1.json", "n2.json"], os.listdir(d)
            assert time.monotonic() - t0 < 120, "the run did not end soon after the deadline"
        wait_no_steps()
    finally:
        os.unlink(fifo)
        CLUSTER.set_scenario("n3", HEALTHY)


def test_ctrl_c_keeps_the_finished_nodes_names_the_others_and_leaves_no_step():
    scenario_all(HEALTHY)
    fifo = CLUSTER.path("scenarios", "n3.toml")
    os.unlink(fifo)
    os.mkfifo(fifo)
    try:
        with tempfile.TemporaryDirectory() as d:
            e = {k: v for k, v in harness.fake_env("offer_healthy_2x_h100").items() if k != "GPUVET_FAKE_SCENARIO"}
            p = subprocess.Popen([harness.GPUVET, "fleet", "check", "-N", "3", "-w", "n1,n2,n3", "--only", ONLY,
                                  "--out", d], env=CLUSTER.env(e), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            deadline = time.monotonic() + 120
            while not (os.path.exists(os.path.join(d, "n1.json")) and os.path.exists(os.path.join(d, "n2.json"))):
                assert time.monotonic() < deadline and p.poll() is None, "n1 and n2 did not report"
                time.sleep(0.2)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=120)
            assert p.returncode == 3, (p.returncode, out, err)
            doc = json.load(open(os.path.join(d, "fleet.json")))
            by = {n["name"]: n for n in doc["nodes"]}
            assert by["n1"]["status"] == "GO" and by["n2"]["status"] == "GO", by
            assert by["n3"]["status"] == "ERROR" and "interrupted" in by["n3"]["problem"], by["n3"]
            assert any("interrupted" in n for n in doc["notes"]), doc["notes"]
        wait_no_steps()
        assert not CLUSTER.jobs(), CLUSTER.jobs()
    finally:
        os.unlink(fifo)
        CLUSTER.set_scenario("n3", HEALTHY)


def test_gpus_requested_but_cuda_visible_devices_empty_is_an_error_that_says_so():
    scenario_all(HEALTHY)
    code, out, err = fleet("-p", "broken", "-N", "1", "--gpus-per-node", "2", "--only", ONLY, "--json")
    assert code == 3, (code, out, err)
    n5 = json.loads(out)["nodes"][0]
    assert n5["name"] == "n5" and n5["status"] == "ERROR", n5
    assert "SLURM_GPUS_ON_NODE=2" in n5["problem"] and "CUDA_VISIBLE_DEVICES is unset" in n5["problem"], n5


def test_a_node_without_the_same_gpuvet_is_named():
    code, out, err = fleet("-w", "n1", "-N", "1", "--only", ONLY, "--gpuvet", "/nonexistent/gpuvet", "--json")
    assert code == 3, (code, out, err)
    n1 = json.loads(out)["nodes"][0]
    assert n1["name"] == "n1" and n1["status"] == "ERROR" and "/nonexistent/gpuvet" in n1["problem"], n1


def test_trial_runs_on_three_nodes_give_one_run_report_each_and_compare_names_the_slowest():
    scenario_all(HEALTHY)
    runs = CLUSTER.path("runs")
    job = ('case $SLURMD_NODENAME in n2) t=2.5;; *) t=0.5;; esac; '
           f'exec {harness.GPUVET} run --tag $SLURMD_NODENAME --report {runs}/$SLURMD_NODENAME -- sleep $t')
    e = {k: v for k, v in harness.fake_env("offer_healthy_2x_h100").items() if k != "GPUVET_FAKE_SCENARIO"}
    r = CLUSTER.run("srun", "-N", "3", "-w", "n1,n2,n3", "--gpus-per-node", "2", "sh", "-c", job, env=e, timeout=180)
    assert r.returncode == 0, (r.stdout, r.stderr)
    with tempfile.TemporaryDirectory() as d:
        for n in ("n1", "n2", "n3"):
            doc = json.load(open(os.path.join(runs, n, "gpuvet-run.json")))
            assert doc["command"] == "run" and doc["slurm"]["node"] == n, doc.get("slurm")
            os.link(os.path.join(runs, n, "gpuvet-run.json"), os.path.join(d, n + ".json"))
        code, out, err = harness.run("compare", "--fleet", d)
        assert code == 1, (code, out, err)
        assert "n2 | " in out and "(slowest)" in out.split("n2 | ")[1].splitlines()[0], out
        assert "slowest node: n2, " in out, out
        code, out, err = harness.run("compare", "--fleet", d, "--json")
        doc = json.loads(out)
        assert doc["slowest"] == "n2" and [n["name"] for n in doc["nodes"]] == ["n1", "n2", "n3"], doc


def test_outside_an_allocation_without_nodes_is_a_usage_error():
    code, out, err = fleet("--only", ONLY)
    assert code == 2 and "not inside a Slurm allocation" in err, (code, err)


def main():
    global CLUSTER
    missing = slurm_cluster.missing_binaries()
    if missing:
        print(f"FAIL: Slurm is not installed ({', '.join(missing)}): run scripts/install-deps --test")
        sys.exit(1)
    with slurm_cluster.Cluster(["n1", "n2", "n3", "n4", "n5"], broken_gres_nodes=["n5"]) as c:
        CLUSTER = c
        harness.main(globals())


if __name__ == "__main__":
    main()
