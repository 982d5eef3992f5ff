"""gpuvet fleet prolog as slurm.conf's Prolog on a real Slurm: slurmd runs it before a job's first step on
a node; a nonzero exit makes Slurm drain the node ("Prolog error") and fail the launch. n1 is healthy
(the job runs), n2 has a GPU out of spare rows (Slurm drains it, the details are in the file), and on
n3 the tool cannot do its work (a driver that does not answer, an unwritable --details folder): the
job runs, the node stays in service, the log says why.
Run: python3 test_prolog.py build/gpuvet."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
import slurm_cluster  # noqa: E402
from slurm_cluster import scaled  # noqa: E402

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEALTHY = os.path.join(TESTS, "fakes", "scenarios", "offer_healthy_2x_h100.toml")
FAULTY = os.path.join(TESTS, "fakes", "scenarios", "pending_row_remap.toml")
CLUSTER = None

# What an operator puts in Prolog, plus the doubles' environment. A node with a .hang file beside its
# scenario gets a driver that never answers and a --details folder that cannot be made.
SCRIPT = """#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export GPUVET_LIBCUDA={build}/tests/fakes/libfakecuda.so GPUVET_LIBNVML={build}/tests/fakes/libfakenvml.so
export GPUVET_FAKE_SCENARIO={dir}/scenarios/$SLURMD_NODENAME.toml GPUVET_FAKE_MACHINE=$SLURMD_NODENAME
details={dir}/details
if [ -e {dir}/scenarios/$SLURMD_NODENAME.hang ]; then
  export GPUVET_FAKE_HANG=nvmlInit,cuInit GPUVET_DRIVER_TIMEOUT_S=1
  details=/proc/gpuvet-cannot-write-here
fi
exec {gpuvet} fleet prolog --details $details >>{dir}/log/prolog.$SLURMD_NODENAME.log 2>&1
"""


def log(node):
    with open(CLUSTER.path("log", f"prolog.{node}.log"), errors="replace") as f:
        return f.read()


def job_on(node):
    """A one-task job on `node`: srun's result."""
    return CLUSTER.run("srun", "-N", "1", "-w", node, "--job-name", "after-prolog", "true", timeout=scaled(180))


def test_a_healthy_node_runs_the_job_and_keeps_its_details():
    r = job_on("n1")
    assert r.returncode == 0, (r.stdout, r.stderr, CLUSTER.logs())
    assert "n1 | Healthy" in log("n1"), log("n1")
    with open(CLUSTER.path("details", "n1.json")) as f:
        doc = json.load(f)
    assert doc["verdict"] in ("PASS", "WARN") and doc["slurm"]["node"] == "n1", doc.get("slurm")
    state, reason = CLUSTER.node_state("n1")
    assert "DRAIN" not in state and reason == "", (state, reason)


def test_a_faulty_node_is_drained_by_slurm_and_the_details_say_why():
    r = job_on("n2")
    assert r.returncode != 0 and "prolog" in r.stderr.lower(), (r.returncode, r.stderr)
    CLUSTER.poll(lambda: "DRAIN" in CLUSTER.node_state("n2")[0], 60, "n2 was not drained after its prolog failed")
    assert CLUSTER.node_state("n2")[1].startswith("Prolog error"), CLUSTER.node_state("n2")
    assert "n2 | ERROR: gpuvet: gpu.health GPU 5" in log("n2"), log("n2")
    with open(CLUSTER.path("details", "n2.json")) as f:
        doc = json.load(f)
    assert doc["verdict"] == "FAIL", doc["verdict"]
    assert [c for c in doc["checks"] if c["key"] == "gpu.health" and c["verdict"] == "FAIL"], doc["checks"]
    CLUSTER.run("scancel", "--name", "after-prolog")
    CLUSTER.wait_no_jobs()


def test_a_tool_error_never_drains_the_node_and_the_log_says_why():
    open(CLUSTER.path("scenarios", "n3.hang"), "w").close()
    r = job_on("n3")
    assert r.returncode == 0, (r.stdout, r.stderr, log("n3"))
    text = log("n3")
    assert "no details file" in text and "/proc/gpuvet-cannot-write-here" in text, text
    assert "the checks could not run on n3, nothing drained" in text, text
    state, reason = CLUSTER.node_state("n3")
    assert "DRAIN" not in state and reason == "", (state, reason)


def main():
    global CLUSTER
    missing = slurm_cluster.missing_binaries()
    if missing:
        print(f"FAIL: Slurm is not installed ({', '.join(missing)}): run scripts/install-deps --test")
        sys.exit(1)
    harness.GPUVET = os.path.abspath(sys.argv[1])
    script = SCRIPT.replace("{build}", os.environ["GPUVET_BUILD_DIR"]).replace("{gpuvet}", harness.GPUVET)
    with slurm_cluster.Cluster(["n1", "n2", "n3"], prolog=script,
                               scenarios={"n1": HEALTHY, "n2": FAULTY, "n3": HEALTHY}) as c:
        CLUSTER = c
        os.makedirs(c.path("details"))
        harness.main(globals())


if __name__ == "__main__":
    main()
