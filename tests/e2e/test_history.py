"""gpuvet history end to end: the real binary on the driver test doubles records check, bench and
burn into a real SQLite file (the harness points GPUVET_HISTORY_DB at a temporary folder for every
test), recognises the box and its GPUs, finds a swapped card, imports saved reports once, and
prints the list, show, trend (terminal and HTML), diff and export."""
import csv
import io
import json
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
FAKES = os.path.join(BUILD, "tests", "fakes")
SCEN = os.path.join(TESTS, "fakes", "scenarios")
FIXTURES = os.path.join(TESTS, "fixtures", "reports")
QUICK = ("--only", "host.identity,gpu.identity,gpu.health,gpu.pcie_link,history.drift")


def fake(path):
    return {"GPUVET_LIBCUDA": os.path.join(FAKES, "libfakecuda.so"),
            "GPUVET_LIBNVML": os.path.join(FAKES, "libfakenvml.so"),
            "GPUVET_CUBLASLT": os.path.join(FAKES, "libfakecublaslt.so"),
            "GPUVET_FAKE_SCENARIO": path}


def scenario(name):
    return os.path.join(SCEN, name + ".toml")


def db():
    return os.environ["GPUVET_HISTORY_DB"]


def rows(sql):
    with sqlite3.connect(db()) as c:
        return c.execute(sql).fetchall()


def history_json(*args):
    code, doc, err = harness.run_json("history", *args)
    assert code == 0, (code, err)
    return doc


def test_the_harness_points_the_history_at_a_temporary_folder():
    path = db()
    assert path.startswith(tempfile.gettempdir()), path
    assert not path.startswith(os.path.expanduser("~")), path
    assert os.environ["XDG_DATA_HOME"].startswith(tempfile.gettempdir())
    code, _, err = harness.run("check", *QUICK, env=fake(scenario("healthy_8x_h100_sxm")))
    assert code == 0, err
    assert os.path.exists(path), "check recorded nowhere the harness can see"
    assert rows("SELECT count(*) FROM runs") == [(1,)]


def test_check_records_the_box_its_gpus_and_serials():
    code, doc, err = harness.run_json("check", *QUICK, env=fake(scenario("healthy_8x_h100_sxm")))
    assert code == 0 and doc["verdict"] == "PASS", err
    drift = [c for c in doc["checks"] if c["key"] == "history.drift"]
    assert drift == [], "the first run has no history file to compare with yet"
    listing = history_json()
    assert len(listing["boxes"]) == 1 and listing["boxes"][0]["gpus"] == 8, listing
    serials = sorted(g["serial"] for g in listing["gpus"])
    assert serials == [str(1654922000000 + i) for i in range(8)], serials
    assert {g["last_verdict"] for g in listing["gpus"]} == {"PASS"}
    code, out, _ = harness.run("history")
    assert code == 0 and listing["boxes"][0]["box"] in out and "1654922000007" in out, out


def test_recording_changes_no_verdict_and_no_exit_code():
    env = fake(scenario("ecc_errors_appearing"))
    code_off, doc_off, _ = harness.run_json("check", *QUICK, "--no-history", env=env)
    assert not os.path.exists(db()), "--no-history wrote the history"
    code_on, doc_on, _ = harness.run_json("check", *QUICK, env=env)
    assert (code_on, doc_on["verdict"]) == (code_off, doc_off["verdict"]), (code_on, code_off)
    assert os.path.exists(db())


def test_an_unwritable_history_is_a_warning_not_a_failure():
    env = dict(fake(scenario("healthy_8x_h100_sxm")), GPUVET_HISTORY_DB="/proc/gpuvet/history.sqlite")
    code, doc, err = harness.run_json("check", *QUICK, env=env)
    assert code == 0 and doc["verdict"] == "PASS", err
    assert "warning: this run is not in the history" in err and "/proc/gpuvet" in err, err


@harness.slow  # a 3 s burn and a p2p bench on the interpreter: about 20 s
def test_bench_and_burn_record_too():
    code, _, err = harness.run("burn", "--duration", "3s", env=fake(scenario("burn_clean")))
    assert code == 0, err
    code, _, err = harness.run("bench", "p2p", "--quick", "--gpus", "0,1", env=fake(scenario("burn_clean")))
    assert code in (0, 1), err
    assert rows("SELECT command FROM runs ORDER BY id") == [("burn",), ("bench",)]
    assert rows("SELECT count(*) FROM boxes") == [(1,)], "the same GPUs are one box"
    peaks = rows("SELECT count(*) FROM figures WHERE metric = 'gpu.burn.temperature_peak_c'")
    assert peaks[0][0] >= 1, peaks


def test_a_swapped_card_is_a_finding_of_the_next_check():
    tmp = tempfile.mkdtemp()
    try:
        base = os.path.join(tmp, "box.toml")
        shutil.copy(scenario("healthy_8x_h100_sxm"), base)
        swapped = os.path.join(tmp, "swapped.toml")
        with open(base) as f, open(swapped, "w") as out:
            out.write(f.read() + '\n[gpu.3]\nserial = "1654922099999"\nuuid = "GPU-fa4e0000-0000-4000-8000-0000000000ff"\n')
        code, _, err = harness.run("check", *QUICK, env=fake(base))
        assert code == 0, err
        code, doc, err = harness.run_json("check", *QUICK, env=fake(swapped))
        assert code == 0 and doc["verdict"] == "WARN", (code, doc["verdict"], err)
        drift = next(c for c in doc["checks"] if c["key"] == "history.drift")
        texts = [f["text"] for f in drift["findings"]]
        assert len(texts) == 1 and "held serial 1654922000003" in texts[0], texts
        assert "now holds serial 1654922099999: the card was replaced" in texts[0], texts
        code, out, _ = harness.run("history", "diff")
        assert code == 0 and "replaced in slot" in out and "1654922099999" in out, out
        assert len(history_json()["boxes"]) == 1
    finally:
        shutil.rmtree(tmp)


def test_only_selects_history_drift_like_any_check():
    env = fake(scenario("healthy_8x_h100_sxm"))
    for _ in range(2):  # the second run has a history to compare with
        code, doc, err = harness.run_json("check", "--only", "gpu.identity", env=env)
        assert code == 0, err
        assert [c["key"] for c in doc["checks"]] == ["gpu.identity"] * 8, [c["key"] for c in doc["checks"]]
    code, doc, err = harness.run_json("check", "--only", "gpu.identity,history.", env=env)
    assert code == 0, err
    assert [c["key"] for c in doc["checks"]].count("history.drift") == 1, doc["checks"]


def test_the_same_report_imported_twice_is_one_entry():
    report = os.path.join(FIXTURES, "healthy-2gpu.json")
    code, out, err = harness.run("history", "import", report)
    assert code == 0 and "added to box-" in out, (out, err)
    code, out, err = harness.run("history", "import", report, report)
    assert code == 0 and out.count("already in the history") == 2, out
    assert rows("SELECT count(*) FROM runs") == [(1,)]


def test_a_renamed_host_with_the_same_gpus_is_one_box():
    tmp = tempfile.mkdtemp()
    try:
        with open(os.path.join(FIXTURES, "healthy-2gpu.json")) as f:
            doc = json.load(f)
        first = os.path.join(tmp, "a.json")
        with open(first, "w") as f:
            json.dump(doc, f)
        doc["machine"]["hostname"] = "renamed-by-the-provider"
        doc["started_at"] = doc["started_at"].replace(doc["started_at"][:4], str(int(doc["started_at"][:4]) + 1))
        second = os.path.join(tmp, "b.json")
        with open(second, "w") as f:
            json.dump(doc, f)
        code, out, err = harness.run("history", "import", first, second)
        assert code == 0, err
        assert "recognised by its GPUs" in out, out
        listing = history_json()
        assert len(listing["boxes"]) == 1 and listing["boxes"][0]["runs"] == 2, listing
        assert listing["boxes"][0]["hostname"] == "renamed-by-the-provider"
        code, out, _ = harness.run("history", "show", "renamed-by-the-provider")
        assert code == 0 and "2 runs" in out, out
    finally:
        shutil.rmtree(tmp)


def test_trend_html_and_export():
    env = fake(scenario("healthy_8x_h100_sxm"))
    for _ in range(2):
        code, _, err = harness.run("check", *QUICK, env=env)
        assert code == 0, err
    doc = history_json("trend", "gpu.identity.sm_count", "--gpu", "1654922000002")
    assert [p["value"] for p in doc["points"]] == [132, 132], doc
    assert doc["points"][0]["spec"] == 132
    tmp = tempfile.mkdtemp()
    try:
        page = os.path.join(tmp, "trend.html")
        code, out, err = harness.run("history", "trend", "gpu.identity.sm_count", "--html", page)
        assert code == 0 and "spec 132" in out and out.count(" 165492200000") == 16, out
        with open(page) as f:
            html = f.read()
        assert "<svg" in html and "gpu.identity.sm_count" in html
        code, out, err = harness.run("history", "export", "--format", "csv")
        assert code == 0, err
        table = list(csv.DictReader(io.StringIO(out)))
        assert table and {r["metric"] for r in table} >= {"gpu.identity.sm_count"}
        assert {r["serial"] for r in table if r["gpu"]} == {str(1654922000000 + i) for i in range(8)}
        code, out, err = harness.run("history", "export", "--format", "jsonl")
        assert code == 0 and len(out.splitlines()) == len(table)
        assert all(json.loads(line)["box"] for line in out.splitlines())
    finally:
        shutil.rmtree(tmp)


def test_bad_input_is_exit_2_with_the_fix():
    code, _, err = harness.run("history")
    assert code == 2 and "no history at" in err and "gpuvet check" in err, err
    code, _, err = harness.run("history", "import", os.path.join(TESTS, "fuzz", "corpus", "report", "truncated.json"))
    assert code == 2 and "truncated.json" in err, err
    assert not os.path.exists(db()), "a bad report created the history"
    code, _, err = harness.run("history", "import", os.path.join(FIXTURES, "healthy-1gpu.json"))
    assert code == 0, err
    code, _, err = harness.run("history", "show", "no-such-box")
    assert code == 2 and "no box or GPU 'no-such-box'" in err, err
    code, _, err = harness.run("history", "trend", "gpu.nonsense")
    assert code == 2 and "recorded metrics:" in err, err
    code, _, err = harness.run("history", "export", "--format", "xml")
    assert code == 2, err
    code, _, err = harness.run("history", "diff")
    assert code == 2 and "one run only" in err, err


def other_gpus(tmp, name, first_serial):
    """The healthy 8-GPU scenario with every GPU's serial and UUID changed (another machine's cards)."""
    path = os.path.join(tmp, name + ".toml")
    with open(scenario("healthy_8x_h100_sxm")) as f, open(path, "w") as out:
        out.write(f.read())
        for i in range(8):
            out.write(f'\n[gpu.{i}]\nserial = "{first_serial + i}"\n'
                      f'uuid = "GPU-0be70000-0000-4000-8000-{first_serial + i:012x}"\n')
    return path


def test_run_records_its_outcome_figures_and_diagnosis():
    env = fake(scenario("run_steady_busy"))
    code, _, err = harness.run("check", *QUICK, env=env)
    assert code == 0, err
    code, out, err = harness.run("run", "--interval", "0.2", "--", "sleep", "1", env=env)
    assert code == 0, err
    assert out == "", "the job owns stdout: the history writes nothing there"
    assert "not in the history" not in err, err
    (run_id, verdict, exit_code, job, tier), = rows(
        "SELECT id, verdict, exit_code, job, tier FROM runs WHERE command = 'run'")
    assert (verdict, exit_code, job, tier) == ("HEALTHY", 0, "sleep 1", None), (verdict, exit_code, job, tier)
    assert rows("SELECT count(*) FROM boxes") == [(1,)], "the run's GPUs are the check's box"
    gpus = rows(f"SELECT count(*) FROM run_gpus WHERE run_id = {run_id} AND gpu_id IS NOT NULL")[0][0]
    assert gpus == 1, gpus  # the scenario's one GPU, identified
    metrics = {m for m, in rows(f"SELECT DISTINCT metric FROM figures WHERE run_id = {run_id}")}
    assert {"run.utilization_mean_percent", "run.utilization_peak_percent", "run.power_mean_w", "run.power_peak_w",
            "run.temperature_mean_c", "run.temperature_peak_c", "run.wall_s"} <= metrics, metrics
    # The double holds the GPU at 97 %: the recorded mean is the summary's.
    util = rows(f"SELECT value FROM figures f JOIN run_gpus rg ON rg.run_id = f.run_id AND rg.gpu_id = f.gpu_id "
                f"WHERE f.run_id = {run_id} AND rg.idx = 0 AND metric = 'run.utilization_mean_percent'")
    assert util and util[0][0] > 90, util
    primary = rows(f"SELECT check_key, text FROM findings WHERE run_id = {run_id}")
    assert len(primary) == 1 and primary[0][0] == "run.diagnosis" and primary[0][1].startswith("E2 "), primary
    listing = history_json()
    assert listing["boxes"][0]["runs"] == 2 and listing["boxes"][0]["last_verdict"] == "HEALTHY", listing
    assert [g["last_verdict"] for g in listing["gpus"]] == ["PASS"], "the GPU keeps the check's verdict"
    box = listing["boxes"][0]["box"]
    code, out, err = harness.run("history", "show", box)
    assert code == 0, err
    assert "run    HEALTHY" in out and "job: sleep 1 (exit 0)" in out, out
    assert "run.diagnosis (" in out and "run.utilization_mean_percent" in out, out
    doc = history_json("show", box)
    shown = doc["runs"][1]
    assert shown["command"] == "run" and shown["job"] == "sleep 1" and shown["exit_code"] == 0, shown
    assert shown["findings"][0]["check"] == "run.diagnosis", shown


def test_run_honours_no_history_and_history_db():
    env = fake(scenario("run_steady_busy"))
    code, _, err = harness.run("run", "--interval", "0.2", "--no-history", "--", "true", env=env)
    assert code == 0, err
    assert not os.path.exists(db()), "--no-history wrote the history"
    tmp = tempfile.mkdtemp()
    try:
        other = os.path.join(tmp, "elsewhere.sqlite")
        code, _, err = harness.run("run", "--interval", "0.2", "--history-db", other, "--", "sh", "-c", "exit 3",
                                   env=env)
        assert code == 3, (code, err)  # the job's own code, recorded or not
        assert not os.path.exists(db())
        with sqlite3.connect(other) as c:
            got = c.execute("SELECT command, verdict, exit_code, job FROM runs").fetchall()
        assert got == [("run", "JOB_FAILED", 3, "sh -c 'exit 3'")], got
    finally:
        shutil.rmtree(tmp)


def test_a_host_only_run_is_recorded_by_its_hostname():
    for _ in range(2):
        code, _, err = harness.run("run", "--interval", "0.2", "--", "true", env=harness.NO_DRIVER)
        assert code == 0, err
    assert rows("SELECT count(*), count(DISTINCT box_id) FROM runs") == [(2, 1)]
    assert rows("SELECT count(*) FROM run_gpus") == [(0,)]


def test_each_check_records_its_tier():
    env = fake(scenario("healthy_8x_h100_sxm"))
    for extra in (("--quick",), (), ("--full",)):
        code, _, err = harness.run("check", *QUICK, *extra, env=env)
        assert code == 0, err
    assert rows("SELECT tier FROM runs ORDER BY id") == [("quick",), ("standard",), ("full",)]
    shown = history_json("show", history_json()["boxes"][0]["box"])
    assert [r["tier"] for r in shown["runs"]] == ["quick", "standard", "full"], shown


def test_a_hostname_now_on_other_gpus_is_said():
    tmp = tempfile.mkdtemp()
    try:
        code, _, err = harness.run("check", *QUICK, env=fake(scenario("healthy_8x_h100_sxm")))
        assert code == 0, err
        first = history_json()["boxes"][0]["box"]
        code, doc, err = harness.run_json("check", *QUICK, env=fake(other_gpus(tmp, "other", 1655000000000)))
        assert code == 0, err
        drift = next(c for c in doc["checks"] if c["key"] == "history.drift")
        assert drift["verdict"] == "SKIP", drift
        texts = [f["text"] for f in drift["findings"]]
        assert len(texts) == 1 and texts[0].startswith("hostname ") and f" was {first} until " in texts[0], texts
        assert drift["findings"][0]["verdict"] == "PASS", drift
        listing = history_json()
        assert len(listing["boxes"]) == 2, listing
        moves = listing["hostname_changes"]
        assert len(moves) == 1 and moves[0]["before_box"] == first, moves
        code, out, _ = harness.run("history")
        assert code == 0 and "Hostnames now on other GPUs (1)" in out and f" was {first} until " in out, out
    finally:
        shutil.rmtree(tmp)


def test_diff_names_an_inforom_and_a_cuda_driver_change():
    tmp = tempfile.mkdtemp()
    try:
        changed = os.path.join(tmp, "changed.toml")
        with open(scenario("healthy_8x_h100_sxm")) as f, open(changed, "w") as out:
            out.write(f.read().replace("gpu_count = 8", 'gpu_count = 8\n\n[driver]\ncuda_version = 12090\n') +
                      '\n[gpu.2]\ninforom_image = "G520.0200.00.06"\n')
        for env in (fake(scenario("healthy_8x_h100_sxm")), fake(changed)):
            code, _, err = harness.run("check", *QUICK, env=env)
            assert code == 0, err
        code, out, err = harness.run("history", "diff")
        assert code == 0, err
        assert "InfoROM of serial 1654922000002" in out and "G520.0200.00.05 -> G520.0200.00.06" in out, out
        assert "CUDA driver version: 12.8 -> 12.9" in out, out
        doc = history_json("diff")
        assert sum("InfoROM" in h for h in doc["hardware"]) == 1, doc["hardware"]
    finally:
        shutil.rmtree(tmp)


def test_check_report_html_shows_the_box_history():
    env = fake(scenario("healthy_8x_h100_sxm"))
    tmp = tempfile.mkdtemp()
    try:
        first = os.path.join(tmp, "first")
        code, _, err = harness.run("check", *QUICK, "--report", first, env=env)
        assert code == 0, err
        with open(os.path.join(first, "report.html")) as f:
            assert 'id="history"' not in f.read(), "the first run has no history to show"
        for _ in range(2):
            code, _, err = harness.run("check", *QUICK, env=env)
            assert code == 0, err
        out = os.path.join(tmp, "third")
        code, _, err = harness.run("check", *QUICK, "--report", out, env=env)
        assert code == 0, err
        path = os.path.join(out, "report.html")
        import test_html_report  # its strict parser and the Chromium page driver
        text, _ = test_html_report.strict(path)
        assert "<h2>History of this box</h2>" in text
        page = test_html_report.load(path)
        try:
            assert page.console_problems() == [], page.console_problems()
            assert page.requests() == ["file://" + os.path.abspath(path)], page.requests()
            runs = page.evaluate("[...document.querySelectorAll('#history table.history-runs tr')].slice(1)"
                                 ".map(r => [r.cells[1].textContent, r.cells[2].textContent])")
            assert runs == [["check (standard)", "PASS"]] * 3, runs
            charts = page.evaluate("[...document.querySelectorAll('#history figure.trend')].map(f => "
                                   "[f.dataset.metric, f.querySelectorAll('svg.chart.lines path.line').length, "
                                   "f.querySelector('svg').getBoundingClientRect().width])")
            sm = [c for c in charts if c[0] == "gpu.identity.sm_count"]
            assert sm and sm[0][1] == 8 and sm[0][2] > 100, charts  # a line per GPU, drawn
            os.makedirs(test_html_report.SHOTS, exist_ok=True)
            shot = os.path.join(test_html_report.SHOTS, "check-with-history.png")
            page.screenshot(shot)
        finally:
            page.close()
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    harness.main(globals())
