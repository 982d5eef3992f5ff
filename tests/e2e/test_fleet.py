"""gpuvet fleet's node side and the fleet comparisons that need no Slurm: the prolog's exit codes (only a
hardware FAIL is nonzero, whatever goes wrong with the tool), reports written per node under a Slurm
step, run reports judged against the fleet's median, a GPU UUID that two nodes report. The Slurm
cluster tests are in tests/slurm."""
import json
import os
import shutil
import tempfile

from harness import NO_DRIVER, fake_env, main, run

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(__file__), ".."))
FIXTURES = os.path.join(TESTS, "fixtures", "reports")
FAULTY = os.path.join(TESTS, "fakes", "scenarios", "pending_row_remap.toml")


def prolog(*args, env=None):
    e = fake_env("offer_healthy_2x_h100")
    e["SLURMD_NODENAME"] = "n9"
    e.update(env or {})
    return run("fleet", "prolog", *args, env=e)


def test_the_prolog_exits_0_for_every_tool_error_and_says_why():
    for args, words in ((["--node-timeout", "soon"], "--node-timeout"),
                        (["--no-such-option"], "no-such-option"),
                        (["--node-timeout", "1s"], "--node-timeout 1s is too short"),
                        (["--details"], "--details")):
        code, out, err = prolog(*args)
        assert code == 0, (args, code, out, err)
        assert words in err and "never drains a node" in err, (args, err)


def test_the_prolog_exits_0_when_the_driver_does_not_answer():
    code, out, err = prolog(env={"GPUVET_FAKE_HANG": "nvmlInit,cuInit", "GPUVET_DRIVER_TIMEOUT_S": "1"})
    assert code == 0, (code, out, err)
    assert out.startswith("n9 | ERROR: gpuvet: "), out
    assert "could not run on n9, nothing drained" in err, err


def test_the_prolog_exits_1_on_a_hardware_fail_even_without_its_details_folder():
    with tempfile.TemporaryDirectory() as d:
        code, out, err = prolog("--details", d, env={"GPUVET_FAKE_SCENARIO": FAULTY})
        assert code == 1, (code, out, err)
        assert out.startswith("n9 | ERROR: gpuvet: gpu.health GPU 5"), out
        with open(os.path.join(d, "n9.json")) as f:
            assert json.load(f)["verdict"] == "FAIL"
        blocker = os.path.join(d, "a-file")
        open(blocker, "w").close()  # a --details "folder" that cannot be made
        code, out, err = prolog("--details", os.path.join(blocker, "sub"), env={"GPUVET_FAKE_SCENARIO": FAULTY})
        assert code == 1 and "no details file" in err, (code, err)
        code, out, err = prolog("--details", os.path.join(blocker, "sub"))
        assert code == 0 and out == "n9 | Healthy\n" and "no details file" in err, (code, out, err)


def step_env(node, tasks=2, nodes=2, local_id="0"):
    return {**NO_DRIVER, "SLURM_JOB_ID": "42", "SLURM_STEP_ID": "0", "SLURMD_NODENAME": node,
            "SLURM_STEP_NUM_TASKS": str(tasks), "SLURM_STEP_NUM_NODES": str(nodes), "SLURM_LOCALID": local_id}


def test_run_report_of_a_multi_task_slurm_step_goes_into_the_nodes_folder():
    with tempfile.TemporaryDirectory() as d:
        for node in ("n1", "n2"):
            code, _, err = run("run", "--report", d, "--", "true", env=step_env(node))
            assert code == 0, err
        assert sorted(os.listdir(d)) == ["n1", "n2"], os.listdir(d)
        for node in ("n1", "n2"):
            with open(os.path.join(d, node, "gpuvet-run.json")) as f:
                assert json.load(f)["slurm"]["node"] == node
        # Several tasks on one node: one folder per task.
        code, _, err = run("run", "--report", d, "--", "true", env=step_env("n3", tasks=4, nodes=2, local_id="1"))
        assert code == 0 and os.path.exists(os.path.join(d, "n3-1", "gpuvet-run.json")), (err, os.listdir(d))
        # One task alone (or no Slurm at all) writes into DIR itself.
        code, _, err = run("run", "--report", d, "--", "true", env=step_env("n4", tasks=1, nodes=1))
        assert code == 0 and os.path.exists(os.path.join(d, "gpuvet-run.json")), (err, os.listdir(d))


def run_fleet(d, walls):
    """One real run report, copied into a folder per node with the wall time each node took."""
    code, _, err = run("run", "--report", os.path.join(d, "base"), "--", "true", env=NO_DRIVER)
    assert code == 0, err
    with open(os.path.join(d, "base", "gpuvet-run.json")) as f:
        doc = json.load(f)
    shutil.rmtree(os.path.join(d, "base"))
    fleet = os.path.join(d, "fleet")
    for node, wall in walls.items():
        os.makedirs(os.path.join(fleet, node))
        doc["run"]["wall_s"] = wall
        with open(os.path.join(fleet, node, "gpuvet-run.json"), "w") as f:
            json.dump(doc, f)
    return fleet


def test_compare_fleet_of_runs_judges_each_node_against_the_median():
    with tempfile.TemporaryDirectory() as d:
        fleet = run_fleet(d, {"n1": 100.0, "n2": 101.0, "n3": 99.5, "n4": 118.0, "n5": 99.0, "n6": 131.0})
        code, out, err = run("compare", "--fleet", fleet, "--json")
        assert code == 1, (code, out, err)
        doc = json.loads(out)
        assert doc["median_node"] == "n1" and doc["median_wall_s"] == 100.0, doc
        assert doc["stragglers"] == ["n4", "n6"] and doc["slowest"] == "n6", doc
        gaps = {n["name"]: n["gap_fraction"] for n in doc["nodes"]}
        assert abs(gaps["n4"] - 0.18) < 1e-9 and abs(gaps["n2"] - 0.01) < 1e-9, gaps
        code, out, err = run("compare", "--fleet", fleet, "--no-color")
        assert code == 1, err
        lines = {l.split(" | ")[0]: l.split(" | ")[1] for l in out.splitlines() if " | " in l}
        assert lines["n1"] == "100 s, the median", lines
        assert lines["n4"] == "118 s, +18% against the median (straggler)", lines
        assert lines["n6"] == "131 s, +31% against the median (straggler, slowest)", lines
        assert lines["n2"] == "101 s, +1% against the median", lines
        assert "slowest node: n6, 1.31x the time of the median node n1; 2 of 6 nodes" in out, out


def test_compare_fleet_of_runs_within_three_percent_of_the_median_is_0():
    with tempfile.TemporaryDirectory() as d:
        fleet = run_fleet(d, {"a": 100.0, "b": 102.0, "c": 98.0})
        code, out, err = run("compare", "--fleet", fleet, "--json")
        assert code == 0, (code, out, err)
        doc = json.loads(out)
        assert doc["stragglers"] == [] and doc["slowest"] is None and doc["median_node"] == "a", doc


def test_a_gpu_uuid_on_two_nodes_is_a_finding_of_the_fleet():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(FIXTURES, "healthy-8gpu.json")) as f:
            doc = json.load(f)
        for i in range(1, 5):
            doc["machine"]["hostname"] = f"node{i}"
            for g in doc["gpus"]:
                g["uuid"] = f"GPU-{i:08x}-0000-4000-8000-{g['index'] + 1:012x}"
            if i == 4:  # node4's GPU 2 is node2's GPU 2
                doc["gpus"][2]["uuid"] = f"GPU-{2:08x}-0000-4000-8000-{3:012x}"
            with open(os.path.join(d, f"node{i}.json"), "w") as f:
                json.dump(doc, f)
        code, out, err = run("compare", "--fleet", d, "--nhc")
        assert code == 1, (code, out, err)
        lines = dict(l.split(" | ", 1) for l in out.splitlines())
        assert lines["node1"] == "Healthy" and lines["node3"] == "Healthy", lines
        uuid = "GPU-00000002-0000-4000-8000-000000000003"
        assert lines["node2"] == f"ERROR: gpuvet: GPU identity: GPU 2 {uuid} is also GPU 2 of node4", lines
        assert lines["node4"] == f"ERROR: gpuvet: GPU identity: GPU 2 {uuid} is also GPU 2 of node2", lines
        code, out, err = run("compare", "--fleet", d, "--json")
        fleet = json.loads(out)
        assert fleet["fleet_verdict"] == "NO-GO", fleet["fleet_verdict"]
        assert [n for n in fleet["notes"] if uuid in n and "node2 and node4" in n], fleet["notes"]


main(globals())
