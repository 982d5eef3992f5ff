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
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
import slurm_cluster  # noqa: E402
from slurm_cluster import scaled  # noqa: E402

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


def doubles_env(env=None):
    """The driver doubles for gpuvet on the nodes (each node's scenario comes from the TaskProlog)."""
    e = {k: v for k, v in harness.fake_env("offer_healthy_2x_h100").items() if k != "GPUVET_FAKE_SCENARIO"}
    e.update(env or {})
    return e


def fleet(*args, timeout=300, env=None):
    """gpuvet fleet check ARGS against the test cluster: (exit code, stdout, stderr)."""
    p = subprocess.run([harness.GPUVET, "fleet", "check", *args], env=CLUSTER.env(doubles_env(env)),
                       capture_output=True, text=True, timeout=scaled(timeout))
    harness.check_no_crash(args, p.returncode, p.stderr)
    return p.returncode, p.stdout, p.stderr


def start_fleet(*args, env=None):
    """gpuvet fleet check ARGS in the background (a Popen with text pipes)."""
    return subprocess.Popen([harness.GPUVET, "fleet", "check", *args], env=CLUSTER.env(doubles_env(env)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_files(d, names, p, timeout_s=180):
    """Until every file of `names` is in folder d (the fleet check `p` must still be running)."""
    def there():
        assert p.poll() is None, ("the fleet check ended early", p.returncode, p.communicate())
        return all(os.path.exists(os.path.join(d, n)) for n in names)

    CLUSTER.poll(there, timeout_s, f"{names} were not written")


def allocation(nodes, *more):
    """salloc --no-shell on `nodes`: the job id (scancel it at the end)."""
    r = CLUSTER.run("salloc", "--no-shell", "-w", nodes, "-N", str(len(nodes.split(","))), "-J", "vetting", *more)
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
        CLUSTER.wait_no_jobs()


def test_the_fleet_history_keeps_each_node_and_judges_it_against_its_own_past():
    scenario_all(HEALTHY)
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "fleet.sqlite")
        args = ("-N", "3", "-w", "n1,n2,n3", "--gpus-per-node", "2", "--only", "gpu.identity,gpu.health,history.",
                "--history-db", db, "--json")
        code, out, err = fleet(*args)
        assert code == 0, (code, out, err)
        assert all(n["drift"] == [] for n in json.loads(out)["nodes"]), out
        p = subprocess.run([harness.GPUVET, "history", "--history-db", db, "--json"], capture_output=True, text=True,
                           timeout=scaled(60))
        assert p.returncode == 0, p.stderr
        boxes = json.loads(p.stdout)["boxes"]
        assert len(boxes) == 3 and all(b["runs"] == 1 for b in boxes), boxes
        # The nodes wrote no history of their own: the harness's folder stays empty.
        assert not os.path.exists(os.environ["GPUVET_HISTORY_DB"]), "a node recorded into the default history"
        # n2's GPU 1 is replaced between two fleet checks: n2 is told so, against its own past.
        swapped = CLUSTER.path("swapped.toml")
        with open(HEALTHY) as f, open(swapped, "w") as w:
            w.write(f.read() + '\n[gpu.1]\nserial = "1654922099999"\nuuid = "GPU-fa4e0000-0000-4000-8000-0000000000ff"\n')
        CLUSTER.set_scenario("n2", swapped)
        code, out, err = fleet(*args)
        assert code == 0, (code, out, err)
        nodes = {n["name"]: n for n in json.loads(out)["nodes"]}
        assert nodes["n1"]["drift"] == [] and nodes["n3"]["drift"] == [], nodes
        assert len(nodes["n2"]["drift"]) == 1 and "now holds serial 1654922099999" in nodes["n2"]["drift"][0], nodes
        assert nodes["n2"]["status"] == "GO", nodes["n2"]
        p = subprocess.run([harness.GPUVET, "history", "--history-db", db, "--json"], capture_output=True, text=True,
                           timeout=scaled(60))
        assert p.returncode == 0 and len(json.loads(p.stdout)["boxes"]) == 3, (p.stdout, p.stderr)
        # Without --history-db nor history selected, the default history records; --no-history nothing.
        code, out, err = fleet("-N", "3", "-w", "n1,n2,n3", "--gpus-per-node", "2", "--only", ONLY, "--no-history")
        assert code == 0 and not os.path.exists(os.environ["GPUVET_HISTORY_DB"]), (code, out, err)
        code, out, err = fleet("-N", "1", "-w", "n1", "--only", ONLY, "--history-db", d)
        assert code == 2 and "history" in err, (code, out, err)
        CLUSTER.wait_no_jobs()


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


class HungNode:
    """`with HungNode("n3"):` the node's scenario is a FIFO nobody writes: the doubles' nvmlInit blocks
    opening it, a driver that never answers (gpuvet's own driver deadline is set far beyond the
    test's node deadline through HUNG_ENV)."""

    def __init__(self, node):
        self.node = node

    def __enter__(self):
        scenario_all(HEALTHY)
        self.fifo = CLUSTER.path("scenarios", self.node + ".toml")
        os.unlink(self.fifo)
        os.mkfifo(self.fifo)
        return self

    def __exit__(self, *exc):
        os.unlink(self.fifo)
        CLUSTER.set_scenario(self.node, HEALTHY)


HUNG_ENV = {"GPUVET_DRIVER_TIMEOUT_S": "3600"}
NODE_TIMEOUT_S = int(scaled(30))  # a healthy node's check takes seconds; room for a loaded machine


def test_a_hung_node_is_named_after_the_deadline_and_the_others_report():
    with HungNode("n3"), tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        code, out, err = fleet("-N", "3", "-w", "n1,n2,n3", "--only", ONLY, "--node-timeout", f"{NODE_TIMEOUT_S}s",
                               "--out", d, "--json", env=HUNG_ENV)
        assert code == 3, (code, out, err)
        doc = json.loads(out)
        by = {n["name"]: n for n in doc["nodes"]}
        assert by["n1"]["status"] == "GO" and by["n2"]["status"] == "GO", by
        assert by["n3"]["status"] == "ERROR", by["n3"]
        assert f"did not finish within the node deadline of {NODE_TIMEOUT_S} s" in by["n3"]["problem"], by["n3"]
        assert sorted(f for f in os.listdir(d) if f.startswith("n")) == ["n1.json", "n2.json"], os.listdir(d)
        assert time.monotonic() - t0 < NODE_TIMEOUT_S + scaled(120), "the run did not end soon after the deadline"
    CLUSTER.wait_no_jobs()


def test_the_node_deadline_starts_when_the_node_starts_not_while_the_allocation_waits():
    """A fleet check that waits for its nodes longer than the node deadline still gets their reports."""
    scenario_all(HEALTHY)
    holder = allocation("n1", "--exclusive")  # the node is busy: the fleet check's srun waits for it
    try:
        with tempfile.TemporaryDirectory() as d:
            # Long enough for a healthy node's check on a loaded machine, short enough to wait out.
            node_timeout_s = int(scaled(20))
            p = start_fleet("-N", "1", "-w", "n1", "--only", ONLY, "--node-timeout", f"{node_timeout_s}s", "--out", d,
                            "--json")
            try:
                CLUSTER.poll(lambda: any(j.endswith("PENDING") for j in CLUSTER.jobs()), 60,
                             "the fleet check's job was not pending")
                time.sleep(node_timeout_s + 3)  # past the node deadline: the time under test, not a wait
                assert p.poll() is None, ("the fleet check ended while its job waited", p.communicate())
            finally:
                CLUSTER.run("scancel", holder)
            out, err = p.communicate(timeout=scaled(180))
        assert p.returncode == 0, (p.returncode, out, err)
        assert json.loads(out)["nodes"][0]["status"] == "GO", out
    finally:
        CLUSTER.run("scancel", holder)
    CLUSTER.wait_no_jobs()


def test_ctrl_c_keeps_the_finished_nodes_names_the_others_and_leaves_no_step():
    with HungNode("n3"), tempfile.TemporaryDirectory() as d:
        p = start_fleet("-N", "3", "-w", "n1,n2,n3", "--only", ONLY, "--out", d, env=HUNG_ENV)
        wait_for_files(d, ["n1.json", "n2.json"], p)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=scaled(180))
        assert p.returncode == 3, (p.returncode, out, err)
        doc = json.load(open(os.path.join(d, "fleet.json")))
        by = {n["name"]: n for n in doc["nodes"]}
        assert by["n1"]["status"] == "GO" and by["n2"]["status"] == "GO", by
        assert by["n3"]["status"] == "ERROR" and "interrupted" in by["n3"]["problem"], by["n3"]
        assert any("interrupted" in n for n in doc["notes"]), doc["notes"]
        assert not CLUSTER.processes("srun"), "srun outlived the fleet check"
        CLUSTER.wait_no_jobs()  # a cancelled job is COMPLETING until its tasks are gone


def stubborn_gpuvet(node):
    """A --gpuvet for the fleet: gpuvet itself, except on `node`, whose task says hello and then ignores
    SIGTERM, so that Slurm needs KillWait (5 s here) and a SIGKILL to end it."""
    version = subprocess.run([harness.GPUVET, "--version"], capture_output=True, text=True).stdout.split()[-1]
    path = CLUSTER.path("stubborn-gpuvet")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f'if [ "$SLURMD_NODENAME" = {node} ]; then\n'
                f'  echo "@gpuvet-step hello version={version} node={node} host=$(hostname) '
                'job=$SLURM_JOB_ID step=$SLURM_STEP_ID"\n'
                "  trap '' TERM INT\n"
                "  while :; do sleep 1; done\n"
                "fi\n"
                f'exec {harness.GPUVET} "$@"\n')
    os.chmod(path, 0o755)
    return path


def test_a_second_ctrl_c_exits_at_once_and_still_leaves_no_srun_and_no_step():
    """The first Ctrl-C's scancel hangs (a slurmctld slow to answer: scancel is a wrapper that waits
    20 s); the second one exits at once, and srun and the step must still end."""
    scenario_all(HEALTHY)
    slow = CLUSTER.path("slow-bin")
    os.makedirs(slow, exist_ok=True)
    with open(os.path.join(slow, "scancel"), "w") as f:
        f.write(f"#!/bin/sh\nsleep 20\nexec {slurm_cluster.sbin('scancel')} \"$@\"\n")
    os.chmod(os.path.join(slow, "scancel"), 0o755)
    env = {"PATH": slow + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")}
    with tempfile.TemporaryDirectory() as d:
        p = start_fleet("-N", "3", "-w", "n1,n2,n3", "--only", ONLY, "--out", d, "--gpuvet", stubborn_gpuvet("n3"),
                        env=env)
        wait_for_files(d, ["n1.json", "n2.json"], p)
        err_lines = []
        reader = threading.Thread(target=lambda: err_lines.extend(iter(p.stderr.readline, "")), daemon=True)
        reader.start()
        p.send_signal(signal.SIGINT)
        CLUSTER.poll(lambda: any("stopping" in l for l in err_lines), 60, "the first Ctrl-C was not taken")
        assert p.poll() is None, "the fleet check ended before the second Ctrl-C"
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        p.wait(timeout=scaled(30))
        assert time.monotonic() - t0 < scaled(10), "the second Ctrl-C did not exit at once"
        reader.join(timeout=scaled(10))  # nothing gpuvet left behind holds its stderr
        assert not reader.is_alive(), "gpuvet's stderr is still held open"
        err = "".join(err_lines)
        assert p.returncode == 3, (p.returncode, err)
        assert "interrupted again" in err, err
        assert not os.path.exists(os.path.join(d, "fleet.json")), os.listdir(d)
    CLUSTER.poll(lambda: not CLUSTER.processes("srun"), 30, "srun still running after the second Ctrl-C")
    CLUSTER.wait_no_jobs()


def test_gpus_requested_but_cuda_visible_devices_empty_is_an_error_that_says_so():
    scenario_all(HEALTHY)
    # The caller's own CUDA_VISIBLE_DEVICES must not reach the node: there it would hide that Slurm
    # gave the task none.
    code, out, err = fleet("-p", "broken", "-N", "1", "--gpus-per-node", "2", "--only", ONLY, "--json",
                           env={"CUDA_VISIBLE_DEVICES": "0,1"})
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
    # One shared --report folder: each node's report goes into its own folder of it, by node name.
    job = ('case $SLURMD_NODENAME in n2) t=3;; *) t=1;; esac; '
           f'exec {harness.GPUVET} run --report {runs} -- sleep $t')
    r = CLUSTER.run("srun", "-N", "3", "-w", "n1,n2,n3", "--gpus-per-node", "2", "sh", "-c", job, env=doubles_env())
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert sorted(os.listdir(runs)) == ["n1", "n2", "n3"], os.listdir(runs)
    for n in ("n1", "n2", "n3"):
        doc = json.load(open(os.path.join(runs, n, "gpuvet-run.json")))
        assert doc["command"] == "run" and doc["slurm"]["node"] == n, doc.get("slurm")
    code, out, err = harness.run("compare", "--fleet", runs)
    assert code == 1, (code, out, err)
    assert "n2 | " in out and "(straggler, slowest)" in out.split("n2 | ")[1].splitlines()[0], out
    assert "slowest node: n2, " in out, out
    code, out, err = harness.run("compare", "--fleet", runs, "--json")
    doc = json.loads(out)
    assert doc["slowest"] == "n2" and [n["name"] for n in doc["nodes"]] == ["n1", "n2", "n3"], doc
    assert doc["median_node"] in ("n1", "n3") and "n2" in doc["stragglers"], doc
    n2 = next(n for n in doc["nodes"] if n["name"] == "n2")
    assert n2["gap_fraction"] > 1, n2  # three times the median's one second, less the start-up


def causes(reason):
    """The checks a gpuvet drain reason records: "gpuvet: ... (checks: a,b)"."""
    assert reason.startswith("gpuvet: ") and reason.endswith(")") and " (checks: " in reason, reason
    return reason.rsplit(" (checks: ", 1)[1][:-1].split(",")


def test_a_node_drained_for_an_outlier_is_resumed_only_by_a_run_that_judges_that_figure_again():
    scenario_all(HEALTHY)
    CLUSTER.set_scenario("n4", os.path.join(SCENARIOS, "fleet_slow_gpu.toml"))
    gemm = {"GPUVET_CUBLASLT": os.path.join(os.environ["GPUVET_BUILD_DIR"], "tests", "fakes", "libfakecublaslt.so")}
    job = allocation("n1,n2,n3,n4")
    try:
        env = dict(gemm, SLURM_JOB_ID=job, SLURM_JOB_NUM_NODES="4")
        code, out, err = fleet("--only", "gpu.identity,gpu.gemm", "--nhc", "--drain", env=env)
        assert code == 1, (code, out, err)
        assert out.splitlines()[3].startswith("n4 | ERROR: gpuvet: ") and "low outlier: BF16 GEMM GPU 1" in out, out
        state, reason = CLUSTER.node_state("n4")
        assert "DRAIN" in state and "fleet.bf16_tflops" in causes(reason), (state, reason)
        for n in ("n1", "n2", "n3"):
            assert "DRAIN" not in CLUSTER.node_state(n)[0], n
        CLUSTER.set_scenario("n4", HEALTHY)  # the card is replaced
        # A run of the passive checks passes the node but did not measure GEMM: it stays drained.
        code, out, err = fleet("--only", ONLY, "--nhc", "--resume", env=env)
        assert code == 0, (code, out, err)
        assert "n4: not resumed: drained for " in err and "fleet.bf16_tflops" in err, err
        assert "DRAIN" in CLUSTER.node_state("n4")[0], CLUSTER.node_state("n4")
        # GEMM measured again on the whole fleet, n4 among its peers: it is given back.
        code, out, err = fleet("--only", "gpu.identity,gpu.gemm", "--nhc", "--resume", env=env)
        assert code == 0, (code, out, err)
        assert "n4: resume: " in err, err
        state, reason = CLUSTER.node_state("n4")
        assert "DRAIN" not in state and reason == "", (state, reason)
    finally:
        CLUSTER.run("scancel", job)
        CLUSTER.set_scenario("n4", HEALTHY)
        CLUSTER.resume("n4")
    CLUSTER.wait_idle(["n1", "n2", "n3", "n4"])


def test_another_gpuvet_version_on_a_node_is_named_with_both_versions():
    # A node with another release: its agent says hello with its own version and refuses.
    other = CLUSTER.path("other-gpuvet")
    with open(other, "w") as f:
        f.write("#!/bin/sh\n"
                "echo \"@gpuvet-step hello version=0.0.9 node=$SLURMD_NODENAME host=$(hostname) "
                "job=$SLURM_JOB_ID step=$SLURM_STEP_ID\"\n"
                "echo 'gpuvet 0.0.9 is installed on this node, the fleet runs gpuvet another' >&2\n"
                "echo '@gpuvet-step end exit=2 refused=version'\n"
                "exit 2\n")
    os.chmod(other, 0o755)
    code, out, err = fleet("-w", "n1,n2", "-N", "2", "--only", ONLY, "--gpuvet", other, "--json")
    assert code == 3, (code, out, err)
    doc = json.loads(out)
    for n in doc["nodes"]:
        assert n["status"] == "ERROR", n
        assert n["problem"].startswith("runs gpuvet 0.0.9, this fleet check is gpuvet " + doc["tool_version"]), n
        assert n["problem"].endswith("install the same gpuvet on every node"), n
    assert [n["name"] for n in doc["nodes"]] == ["n1", "n2"], doc["nodes"]
    # The agent itself refuses a fleet of another version, before running anything.
    p = subprocess.run([harness.GPUVET, "fleet", "agent", "--expect-version", "0.0.9", "--", "check"],
                       capture_output=True, text=True, timeout=scaled(60))
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    assert lines[0].startswith("@gpuvet-step hello version=" + doc["tool_version"]), lines
    assert lines[-1] == "@gpuvet-step end exit=2 refused=version", lines
    assert "the fleet runs gpuvet 0.0.9" in p.stderr, p.stderr


def test_health_check_dry_run_prints_the_drain_and_the_resume_and_changes_nothing():
    scenario_all(HEALTHY)
    faulty = faulty_scenario(CLUSTER.path("faulty.toml"))

    def health_check(node, scenario):
        e = doubles_env({"SLURMD_NODENAME": node, "GPUVET_FAKE_SCENARIO": scenario, "GPUVET_FAKE_MACHINE": node})
        p = subprocess.run([harness.GPUVET, "fleet", "health-check", "--dry-run"], env=CLUSTER.env(e),
                           capture_output=True, text=True, timeout=scaled(120))
        harness.check_no_crash(["fleet", "health-check"], p.returncode, p.stderr)
        return p.returncode, p.stdout, p.stderr

    code, out, err = health_check("n4", faulty)
    assert code == 1, (code, out, err)
    assert "n4: drain: gpuvet: gpu.health GPU 1 FAIL" in out and "(not done with --dry-run): " in out, out
    assert "scontrol update NodeName=n4 State=DRAIN 'Reason=gpuvet: gpu.health GPU 1 FAIL" in out, out
    assert "DRAIN" not in CLUSTER.node_state("n4")[0], CLUSTER.node_state("n4")
    CLUSTER.drain("n4", "gpuvet: gpu.health GPU 1 FAIL: rows (checks: gpu.health)")
    try:
        code, out, err = health_check("n4", HEALTHY)
        assert code == 0, (code, out, err)
        assert "(not done with --dry-run): scontrol update NodeName=n4 State=RESUME" in out, out
        assert "DRAIN" in CLUSTER.node_state("n4")[0], CLUSTER.node_state("n4")
        CLUSTER.drain("n4", "gpuvet: gpu.gemm GPU 0 FAIL: 500 TFLOPS (checks: gpu.gemm)")
        code, out, err = health_check("n4", HEALTHY)
        assert code == 0 and "n4: not resumed: drained for gpu.gemm, which this run did not check" in out, out
        assert "scontrol" not in out, out
    finally:
        CLUSTER.resume("n4")


def hanging_bin(name):
    """A folder for PATH whose `name` never answers (a slurmctld that does not reply)."""
    d = CLUSTER.path("hang-" + name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        f.write("#!/bin/sh\nexec sleep 600\n")
    os.chmod(os.path.join(d, name), 0o755)
    return d + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")


def test_the_health_check_ends_within_its_budget_when_slurm_does_not_answer():
    faulty = faulty_scenario(CLUSTER.path("faulty.toml"))

    def health_check(*args, path=None, scenario=faulty, extra=None):
        e = doubles_env({"SLURMD_NODENAME": "n4", "GPUVET_FAKE_SCENARIO": scenario, "GPUVET_FAKE_MACHINE": "n4"})
        if path:
            e["PATH"] = path
        e.update(extra or {})
        t0 = time.monotonic()
        p = subprocess.run([harness.GPUVET, "fleet", "health-check", *args], env=CLUSTER.env(e),
                           capture_output=True, text=True, timeout=scaled(120))
        harness.check_no_crash(["fleet", "health-check"], p.returncode, p.stderr)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0

    # sinfo never answers: it gets 8 s of the default 50 s budget, then the run ends, nothing drained.
    code, out, err, took = health_check(path=hanging_bin("sinfo"))
    assert code == 3 and "sinfo did not finish within 8 s" in err, (code, out, err)
    assert took < 50, took
    # scontrol never answers: it gets what is left of a 25 s budget.
    code, out, err, took = health_check("--node-timeout", "25s", path=hanging_bin("scontrol"))
    assert code == 3 and "scontrol did not finish within" in err, (code, out, err)
    assert 15 < took < 25 + scaled(3), took
    assert "DRAIN" not in CLUSTER.node_state("n4")[0], CLUSTER.node_state("n4")
    # The checks meet a driver that never answers, even with a long driver deadline asked for: their
    # driver calls get a quarter of the checks' 5 s, so the hung call is named inside the budget.
    code, out, err, took = health_check("--node-timeout", "25s", scenario=HEALTHY,
                                        extra={"GPUVET_FAKE_HANG": "nvmlInit", "GPUVET_DRIVER_TIMEOUT_S": "600"})
    assert code == 3 and "nvmlInit_v2 did not return in 1.2 s" in out and "wedged" in out, (code, out, err)
    assert "nothing drained" in err and "DRAIN" not in CLUSTER.node_state("n4")[0], (err, CLUSTER.node_state("n4"))
    assert took < 25, took
    code, out, err, _ = health_check("--node-timeout", "19s")
    assert code == 2 and "--node-timeout 19s is too short" in err and "give at least 25s" in err, (code, err)


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
