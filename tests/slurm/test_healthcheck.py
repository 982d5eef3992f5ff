"""gpuvet fleet health-check as slurm.conf's HealthCheckProgram on a real Slurm: slurmd runs it every
few seconds on each node; the faulty node must drain itself with the gpuvet: reason, the healthy one
must stay in service, and after the repair the health check must give the node back.
Run: python3 test_healthcheck.py build/gpuvet."""
import os
import sys
import time

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
export GPUVET_FAKE_SCENARIO={dir}/scenarios/$SLURMD_NODENAME.toml
exec {gpuvet} fleet health-check >>{dir}/log/hc.$SLURMD_NODENAME.log 2>&1
"""


def wait_for(cond, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} within {timeout_s} s; health-check logs:\n" + CLUSTER.logs())


def test_the_health_check_drains_its_own_faulty_node_and_resumes_it_after_repair():
    wait_for(lambda: CLUSTER.node_state("n2")[1].startswith("gpuvet: gpu.health GPU 5"), 90,
             "n2 was not drained with the gpuvet reason")
    state, reason = CLUSTER.node_state("n2")
    assert "DRAIN" in state, (state, reason)
    state, reason = CLUSTER.node_state("n1")
    assert "DRAIN" not in state and reason == "", (state, reason)
    CLUSTER.set_scenario("n2", HEALTHY)
    wait_for(lambda: "DRAIN" not in CLUSTER.node_state("n2")[0], 90, "n2 was not resumed after the repair")


def test_an_operators_drain_is_never_lifted_by_the_health_check():
    CLUSTER.drain("n1", "memory upgrade")
    time.sleep(12)  # more than two health-check intervals
    state, reason = CLUSTER.node_state("n1")
    assert "DRAIN" in state and reason == "memory upgrade", (state, reason)
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
