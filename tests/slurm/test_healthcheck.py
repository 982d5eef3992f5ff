"""gpuvet fleet health-check as slurm.conf's HealthCheckProgram on a real Slurm: slurmd runs it every
few seconds on each node; the faulty node must drain itself with the gpuvet: reason, the healthy one
must stay in service, and after the repair the health check must give the node back.
Run: python3 test_healthcheck.py build/gpuvet."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
import slurm_cluster  # noqa: E402

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEALTHY = os.path.join(TESTS, "fakes", "scenarios", "offer_healthy_2x_h100.toml")
FAULTY = os.path.join(TESTS, "fakes", "scenarios", "pending_row_remap.toml")
CLUSTER = None

# What an operator puts in HealthCheckProgram, plus the doubles' environment (slurmd gives the
# program almost none of its own: SLURMD_NODENAME, and SLURM_CONF for scontrol here).
SCRIPT = """#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF={conf}
export GPUVET_LIBCUDA={build}/tests/fakes/libfakecuda.so GPUVET_LIBNVML={build}/tests/fakes/libfakenvml.so
export GPUVET_FAKE_SCENARIO={dir}/scenarios/$SLURMD_NODENAME.toml GPUVET_FAKE_MACHINE=$SLURMD_NODENAME
exec {gpuvet} fleet health-check >>{dir}/log/hc.$SLURMD_NODENAME.log 2>&1
"""


def runs_on(node):
    """How many times the health check has run on `node` (one NHC line per run in its log)."""
    try:
        with open(CLUSTER.path("log", f"hc.{node}.log"), errors="replace") as f:
            return sum(1 for line in f if line.startswith(node + " | "))
    except FileNotFoundError:
        return 0


def test_the_health_check_drains_its_own_faulty_node_and_resumes_it_after_repair():
    CLUSTER.poll(lambda: CLUSTER.node_state("n2")[1].startswith("gpuvet: gpu.health GPU 5"), 120,
                 "n2 was not drained with the gpuvet reason")
    state, reason = CLUSTER.node_state("n2")
    assert "DRAIN" in state and reason.endswith("(checks: gpu.health)"), (state, reason)
    state, reason = CLUSTER.node_state("n1")
    assert "DRAIN" not in state and reason == "", (state, reason)
    CLUSTER.set_scenario("n2", HEALTHY)
    CLUSTER.poll(lambda: "DRAIN" not in CLUSTER.node_state("n2")[0], 120, "n2 was not resumed after the repair")


def test_an_operators_drain_is_never_lifted_by_the_health_check():
    CLUSTER.drain("n1", "memory upgrade")
    try:
        seen = runs_on("n1")
        CLUSTER.poll(lambda: runs_on("n1") >= seen + 2, 120, "the health check did not run twice more on n1")
        state, reason = CLUSTER.node_state("n1")
        assert "DRAIN" in state and reason == "memory upgrade", (state, reason)
    finally:
        CLUSTER.resume("n1")


def test_a_node_drained_for_an_active_check_stays_drained_a_passive_cause_is_lifted():
    """n1 passes the passive checks. Drained as fleet check drains for a GEMM failure, the health check
    must leave it drained (it never measures GEMM); drained for gpu.health, it gives it back."""
    CLUSTER.drain("n1", "gpuvet: gpu.gemm GPU 1 FAIL: BF16 GEMM 592 TFLOPS (floor 700) (checks: gpu.gemm)")
    try:
        seen = runs_on("n1")
        CLUSTER.poll(lambda: runs_on("n1") >= seen + 2, 120, "the health check did not run twice more on n1")
        state, reason = CLUSTER.node_state("n1")
        assert "DRAIN" in state and reason.endswith("(checks: gpu.gemm)"), (state, reason)
        with open(CLUSTER.path("log", "hc.n1.log"), errors="replace") as f:
            assert "n1: not resumed: drained for gpu.gemm, which this run did not check" in f.read()
        CLUSTER.drain("n1", "gpuvet: gpu.health GPU 0 FAIL: rows (checks: gpu.health)")
        CLUSTER.poll(lambda: "DRAIN" not in CLUSTER.node_state("n1")[0], 120, "n1 was not resumed")
        assert CLUSTER.node_state("n1")[1] == "", CLUSTER.node_state("n1")
    finally:
        CLUSTER.resume("n1")


def main():
    global CLUSTER
    missing = slurm_cluster.missing_binaries()
    if missing:
        print(f"FAIL: Slurm is not installed ({', '.join(missing)}): run scripts/install-deps --test")
        sys.exit(1)
    harness.GPUVET = os.path.abspath(sys.argv[1])
    script = SCRIPT.replace("{build}", os.environ["GPUVET_BUILD_DIR"]).replace("{gpuvet}", harness.GPUVET)
    with slurm_cluster.Cluster(["n1", "n2"], health_check=script, health_interval_s=5,
                               scenarios={"n1": HEALTHY, "n2": FAULTY}) as c:
        CLUSTER = c
        harness.main(globals())


if __name__ == "__main__":
    main()
