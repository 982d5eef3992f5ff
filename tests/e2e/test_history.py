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


if __name__ == "__main__":
    harness.main(globals())
