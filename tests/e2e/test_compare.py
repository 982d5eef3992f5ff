"""gpuvet compare and --fleet on reports the driver test doubles produced, and the bad inputs that
must end in exit 2 with no output file."""
import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor

from harness import fake_env, main, run, slow

TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(__file__), ".."))
FIXTURES = os.path.join(TESTS, "fixtures", "reports")
CHECKS = "gpu.identity,gpu.health,gpu.pcie_link,gpu.gemm,gpu.h2d_d2h,gpu.burn"
FLEET_CHECKS = "gpu.identity,gpu.gemm,gpu.h2d_d2h"
PRICES = 'currency = "USD"\n[prices]\n"H100 SXM" = 2.49\n'


def fixture(name):
    return os.path.join(FIXTURES, name + ".json")


def check_report(scenario, path, checks=CHECKS, machine=None):
    """machine: a node's name, so that its GPUs have UUIDs of their own (GPUVET_FAKE_MACHINE)."""
    env = fake_env(scenario)
    if machine:
        env["GPUVET_FAKE_MACHINE"] = machine
    env["GPUVET_CUBLASLT"] = os.path.join(os.environ["GPUVET_BUILD_DIR"], "tests", "fakes", "libfakecublaslt.so")
    code, out, err = run("check", "--quick", "--only", checks, "--burn-duration", "1s", "--json", env=env)
    assert code in (0, 1), (scenario, code, err)
    with open(path, "w") as f:
        f.write(out)
    return json.loads(out)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


@slow
def test_power_capped_gen4_offer_loses_to_the_healthy_one_with_its_numbers():
    with tempfile.TemporaryDirectory() as d:
        check_report("offer_power_capped_gen4", os.path.join(d, "capped.json"))
        check_report("offer_healthy_2x_h100", os.path.join(d, "healthy.json"))
        prices = write(os.path.join(d, "prices.toml"), PRICES)
        args = [os.path.join(d, "capped.json"), os.path.join(d, "healthy.json"), "--prices", prices]
        code, out, err = run("compare", *args, "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["command"] == "compare" and doc["winner"] == "healthy", doc["winner"]
        assert doc["decided_by"] == "Sustained burn throughput per USD/h", doc["decided_by"]
        reasons = "\n".join(doc["reasons"])
        assert "healthy gives 317 TFLOPS per USD/h against 225 TFLOPS per USD/h on capped (+41%)" in reasons, reasons
        assert "capped: Power limit 450 W (64% of spec) against 700 W on healthy" in reasons, reasons
        assert "capped: PCIe generation 4 gen" in reasons and "against 5 gen on healthy" in reasons, reasons
        assert "capped: Host to GPU 26 GB/s" in reasons, reasons
        capped = next(o for o in doc["offers"] if o["name"] == "capped")
        below = {f["id"] for f in capped["figures"] if f["below_class"]}
        assert {"bf16_tflops", "power_limit_w"} <= below, below
        healthy = next(o for o in doc["offers"] if o["name"] == "healthy")
        assert not [f for f in healthy["figures"] if f["below_class"]], healthy["figures"]
        assert abs(next(f for f in healthy["figures"] if f["id"] == "bf16_tflops")["per_money"] - 790 / 2.49) < 0.5
        # The same comparison in the other formats says the same winner.
        code, out, _ = run("compare", *args, "--no-color")
        assert code == 0 and "Winner: healthy (by Sustained burn throughput per USD/h)" in out, out
        code, out, _ = run("compare", *args, "--markdown")
        assert out.startswith("# gpuvet compare: Winner: healthy"), out
        html = os.path.join(d, "compare.html")
        code, out, _ = run("compare", *args, "--html", "-o", html)
        with open(html) as f:
            assert "Winner: healthy" in f.read()


def test_a_no_go_offer_never_wins():
    code, out, err = run("compare", fixture("faulty-8gpu"), fixture("healthy-8gpu"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["winner"] == "healthy-8gpu" and doc["currency"] is None, doc
    assert any(r.startswith("faulty-8gpu did not pass acceptance (FAIL): gpu.health GPU 1") for r in doc["reasons"]), doc


def test_the_only_offer_that_passed_wins_without_throughput_figures():
    with tempfile.TemporaryDirectory() as d:
        # Neither report measured a throughput (no burn, GEMM or bandwidth): acceptance alone decides.
        for name in ("faulty-8gpu", "healthy-8gpu"):
            with open(fixture(name)) as f:
                doc = json.load(f)
            doc["checks"] = [c for c in doc["checks"] if c["key"] not in ("gpu.burn", "gpu.gemm", "gpu.memory_bandwidth")]
            write(os.path.join(d, name + ".json"), json.dumps(doc))
        args = [os.path.join(d, "faulty-8gpu.json"), os.path.join(d, "healthy-8gpu.json")]
        code, out, err = run("compare", *args, "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["winner"] == "healthy-8gpu", doc
        assert doc["decided_by"] == "acceptance: the only offer that passed", doc["decided_by"]
        assert any(r.startswith("faulty-8gpu did not pass acceptance (FAIL)") for r in doc["reasons"]), doc["reasons"]
        code, out, _ = run("compare", *args, "--no-color")
        assert code == 0 and "Winner: healthy-8gpu" in out and "no winner" not in out, out


@slow
def test_fleet_of_16_names_exactly_the_two_planted_outliers():
    with tempfile.TemporaryDirectory() as d:
        plan = {f"node{i:02d}": "offer_healthy_2x_h100" for i in range(1, 17)}
        plan["node05"] = "fleet_slow_gpu"
        plan["node11"] = "fleet_slow_host_link"
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda kv: check_report(kv[1], os.path.join(d, kv[0] + ".json"), FLEET_CHECKS, kv[0]),
                          plan.items()))
        code, out, err = run("compare", "--fleet", d, "--json")
        assert code == 1, (code, err)  # a node is not healthy
        doc = json.loads(out)
        assert len(doc["nodes"]) == 16 and doc["gpu_model"] == "h100-sxm5-80gb", doc["nodes"]
        low = {(o["node"], o["gpu"], o["metric"]) for o in doc["outliers"] if o["side"] == "low"}
        assert {n for n, _, _ in low} == {"node05", "node11"}, low
        assert {(g, m) for n, g, m in low if n == "node05"} == {(1, "bf16_tflops"), (1, "fp16_tflops"), (1, "fp8_tflops")}, low
        # A node's figure is its worst GPU: node11's slow host link shows once, on the slower of its GPUs.
        assert [m for n, g, m in low if n == "node11"] == ["h2d_gbps"], low
        assert not [o for o in doc["outliers"] if o["side"] == "high"], doc["outliers"]
        bf16 = next(m for m in doc["metrics"] if m["id"] == "bf16_tflops")
        assert bf16["samples"] == 16 and abs(bf16["median"] - 790) < 1 and bf16["mad"] < 1, bf16
        assert bf16["baseline_nodes"] == 15 and bf16["mad_used"] >= 7.9, bf16  # node05 dropped; MAD floor 1%
        assert {n["name"]: n["status"] for n in doc["nodes"]}["node05"] == "NO-GO", doc["nodes"]
        code, out, err = run("compare", "--fleet", d, "--nhc")
        lines = out.splitlines()
        assert len(lines) == 16, out
        assert sum(l.endswith("| Healthy") for l in lines) == 14, out
        bad = [l for l in lines if "| ERROR: " in l]
        assert [l.split(" |")[0] for l in bad] == ["node05", "node11"], bad
        assert "low outlier: BF16 GEMM GPU 1 592 TFLOPS (fleet median 790)" in bad[0], bad[0]


def test_one_bad_node_never_hides_the_fleet():
    """A node of another GPU model, a truncated report and a run report are each named on their own
    line; the other nodes are still judged (exit 1: a node is not healthy)."""
    with tempfile.TemporaryDirectory() as d:
        doc = json.load(open(fixture("healthy-8gpu")))
        for i in range(1, 5):  # four servers: each its own hostname and GPUs
            doc["machine"]["hostname"] = f"node{i}"
            for g in doc["gpus"]:
                g["uuid"] = f"GPU-{i:08x}-0000-4000-8000-{g['index'] + 1:012x}"
            write(os.path.join(d, f"node{i}.json"), json.dumps(doc))
        shutil.copy(fixture("healthy-1gpu"), os.path.join(d, "node5.json"))
        write(os.path.join(d, "node6.json"), open(fixture("healthy-8gpu")).read()[:500])
        write(os.path.join(d, "node7.json"), json.dumps(dict(doc, command="run")))
        shutil.copy(os.path.join(d, "node1.json"), os.path.join(d, "node8.json"))
        code, out, err = run("compare", "--fleet", d, "--nhc")
        assert code == 1, (code, out, err)
        lines = dict(l.split(" | ", 1) for l in out.splitlines())
        assert len(lines) == 8, out
        assert all(lines[f"node{i}"] == "Healthy" for i in range(1, 5)), out
        assert lines["node5"].startswith("ERROR: gpuvet: GPU model: GPU 0 is l4, the fleet is h100"), lines["node5"]
        assert lines["node6"].startswith("ERROR: gpuvet: report unusable: ") and "complete JSON" in lines["node6"], lines
        assert lines["node7"] == "ERROR: gpuvet: a run report among check reports", lines["node7"]
        assert "the same report as " in lines["node8"] and "node1.json" in lines["node8"], lines["node8"]
        code, out, err = run("compare", "--fleet", d, "--json")
        fleet = json.loads(out)
        assert fleet["gpu_model"].startswith("h100") and fleet["fleet_verdict"] == "NO-GO", fleet["gpu_model"]
        status = {n["name"]: n["status"] for n in fleet["nodes"]}
        assert status == {"node1": "GO", "node2": "GO", "node3": "GO", "node4": "GO", "node5": "NO-GO",
                          "node6": "ERROR", "node7": "ERROR", "node8": "ERROR"}, status


def test_bad_inputs_exit_2_and_write_nothing():
    with tempfile.TemporaryDirectory() as d:
        out_file = os.path.join(d, "out.html")
        good = fixture("healthy-8gpu")
        with open(good) as f:
            doc = json.load(f)
        text = open(good).read()
        cases = {}
        doc2 = dict(doc, schema_version=99)
        cases["schema"] = ([write(os.path.join(d, "v99.json"), json.dumps(doc2)), good],
                           "schema_version 99 is not one this build reads (2 to 3)")
        cases["truncated"] = ([write(os.path.join(d, "cut.json"), text[: len(text) // 2]), good],
                              "not a complete JSON document")
        doc3 = dict(doc, verdict="PASS")  # its checks say WARN
        cases["edited"] = ([write(os.path.join(d, "edited.json"), json.dumps(doc3)), good], "the file was edited")
        cases["same path"] = ([good, good], "is given twice")
        shutil.copy(good, os.path.join(d, "copy.json"))
        cases["same report"] = ([good, os.path.join(d, "copy.json")], "are the same report")
        run_doc = dict(doc, command="run")
        run_file = write(os.path.join(d, "run.json"), json.dumps(run_doc))
        cases["run with --html"] = ([run_file, good], "are for check reports")
        cases["run among checks"] = ([good, run_file], "is a run report among check reports")
        cases["plan"] = ([write(os.path.join(d, "plan.json"), json.dumps(dict(doc, command="plan"))), good],
                         "a 'plan' document, not a check report")
        cases["unknown card"] = ([good, fixture("faulty-8gpu"), "--prices",
                                  write(os.path.join(d, "p.toml"), '[prices]\n"H1OO ZXM" = 2\n')], "unknown GPU 'H1OO ZXM'")
        cases["unpriced card"] = ([good, fixture("healthy-1gpu"), "--prices", write(os.path.join(d, "p2.toml"), PRICES)],
                                  "the price file names no price for l4")
        cases["one report"] = ([good], "compare needs at least two reports")
        for name, (args, words) in cases.items():
            code, out, err = run("compare", *args, "--html", "-o", out_file)
            assert code == 2, (name, code, err)
            assert words in err and "→" in err, (name, err)
            assert not os.path.exists(out_file), name
            assert not [f for f in os.listdir(d) if f.startswith(".")], (name, os.listdir(d))
        code, _, err = run("report", os.path.join(d, "cut.json"), "--html", "-o", out_file)
        assert code == 2 and "not a complete JSON document" in err and not os.path.exists(out_file), err


def test_report_reads_an_older_schema_it_understands():
    with tempfile.TemporaryDirectory() as d:
        with open(fixture("healthy-1gpu")) as f:
            doc = json.load(f)
        doc["schema_version"] = 2
        code, out, err = run("report", write(os.path.join(d, "v2.json"), json.dumps(doc)), "--markdown")
        assert code == 0 and out.startswith("# gpuvet check: GO"), (code, err)


def planned_job(d, *args, name="job.json"):
    """A plan document produced now, as a user would: gpuvet plan ... --json > job.json."""
    code, out, err = run("plan", *args, "--json")
    assert code in (0, 1), err
    return write(os.path.join(d, name), out)


def test_workload_is_planned_on_each_offers_measured_rates():
    with tempfile.TemporaryDirectory() as d:
        job = planned_job(d, "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8")
        prices = write(os.path.join(d, "prices.toml"), PRICES)
        offers = [fixture("healthy-8gpu"), fixture("faulty-2gpu")]
        code, out, err = run("compare", *offers, "--workload", job, "--prices", prices, "--json")
        assert code == 0, err
        w = json.loads(out)["workload"]
        assert w["currency"] == "USD" and w["job"].startswith("Llama-2-7B, QLoRA"), w
        assert {o["name"] for o in w["offers"]} == {"healthy-8gpu", "faulty-2gpu"}, w
        for o in w["offers"]:
            # The same figures `gpuvet plan --measured REPORT` gives for that card: one rate model.
            code, plan_out, err = run("plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8",
                                      "--measured", fixture(o["name"]), "--prices", prices, "--json")
            assert code == 0, err
            row = next(g for g in json.loads(plan_out)["gpus"] if g["rates_source"] == "measured")
            assert o["gpu"] == row["name"] and o["cards"] == row["cards"], (o, row)
            assert o["tokens_per_s"] == row["train_tokens_per_s"] and o["hours"] == row["hours_for_budget"], (o, row)
            assert o["cost"] == row["cost"] and abs(o["cost"] - o["hours"] * o["cards"] * 2.49) < 1e-6, o
            assert o["measured_rate"] < o["datasheet_rate"], o  # measured, not the datasheet's 990 TFLOPS
        costs = {o["name"]: o["cost"] for o in w["offers"]}
        assert w["cheapest"] == min(costs, key=costs.get), w
        assert [o["cost"] for o in w["offers"]] == sorted(costs.values()), "ranked by cost"
        speeds = {o["name"]: o["tokens_per_s"] for o in w["offers"]}
        assert w["fastest"] == max(speeds, key=speeds.get), w
        code, out, err = run("compare", *offers, "--workload", job, "--prices", prices, "--no-color")
        assert code == 0, err
        assert "The planned job on each offer: Llama-2-7B, QLoRA" in out and "Cheapest: " in out, out
        assert "Fastest: " + w["fastest"] in out and "BF16/FP16 dense TFLOPS per card" in out, out
        code, md, err = run("compare", *offers, "--workload", job, "--prices", prices, "--markdown")
        assert code == 0 and "## The planned job on each offer" in md and "| cost USD |" in md, md
        code, page, err = run("compare", *offers, "--workload", job, "--prices", prices, "--html")
        assert code == 0, err
        from test_html_report import StrictParser
        p = StrictParser()
        p.feed(page)
        p.close()
        assert not p.errors and p.stack == [], (p.errors, p.stack)
        assert '<section id="workload">' in page and 'data-offer="' + w["cheapest"] + '"' in page, page[-2000:]


def test_workload_that_fits_nowhere_or_an_offer_without_rates_is_said_per_offer():
    with tempfile.TemporaryDirectory() as d:
        job = planned_job(d, "--model", "llama-2-70b", "--task", "full", "--gpus", "1")
        # An offer whose report matched its GPUs to no datasheet: no measured rate to plan with.
        doc = json.load(open(fixture("healthy-2gpu")))
        for g in doc["gpus"]:
            g.pop("sku", None)
            g.pop("sku_match", None)
        blind = write(os.path.join(d, "blind.json"), json.dumps(doc))
        code, out, err = run("compare", fixture("healthy-8gpu"), blind, "--workload", job, "--json")
        assert code == 0, err
        by = {o["name"]: o for o in json.loads(out)["workload"]["offers"]}
        assert "does not fit on H100 SXM5 80GB within 1 cards" in by["healthy-8gpu"]["absent_reason"], by
        assert by["healthy-8gpu"]["hours"] is None and by["healthy-8gpu"]["cards"] is None, by
        assert "measured no rate" in by["blind"]["absent_reason"], by
        # healthy-8gpu measured GEMM but not its memory bandwidth: inference says so, it does not pass it off.
        code, out, err = run("compare", fixture("healthy-8gpu"), fixture("faulty-2gpu"), "--workload",
                             planned_job(d, "--params", "7B", "--task", "inference", name="serve.json"), "--json")
        by = {o["name"]: o for o in json.loads(out)["workload"]["offers"]}
        assert by["healthy-8gpu"]["rate_measured"] is False and by["healthy-8gpu"]["measured_rate"] is None, by
        assert by["faulty-2gpu"]["rate_measured"] is True and abs(by["faulty-2gpu"]["measured_rate"] - 3000) < 0.01, by
        code, out, err = run("compare", fixture("healthy-8gpu"), blind, "--workload", job, "--no-color")
        assert "No offer could run the job on measured rates." in out, out
        code, out, err = run("compare", fixture("healthy-8gpu"), fixture("faulty-2gpu"), "--workload",
                             os.path.join(d, "serve.json"), "--no-color")
        assert "memory bandwidth GB/s per card not measured (the datasheet's 3350 is used)" in out, out


def test_workload_that_is_not_a_plan_is_exit_2_and_writes_nothing():
    with tempfile.TemporaryDirectory() as d:
        out_file = os.path.join(d, "out.md")
        offers = [fixture("healthy-8gpu"), fixture("faulty-2gpu")]
        for bad, why in ((fixture("healthy-1gpu"), "not a plan document"),
                         (write(os.path.join(d, "cut.json"), '{"command": "plan", "work'), "not JSON")):
            code, out, err = run("compare", *offers, "--workload", bad, "-o", out_file)
            assert code == 2 and why in err and "gpuvet plan" in err, (code, err)
            assert not os.path.exists(out_file)
        old = json.loads(run("plan", "--model", "llama-2-7b", "--json")[1])
        del old["workload"]
        code, _, err = run("compare", *offers, "--workload", write(os.path.join(d, "old.json"), json.dumps(old)))
        assert code == 2 and "no \"workload\"" in err, err


if __name__ == "__main__":
    main(globals())
