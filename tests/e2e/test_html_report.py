"""The HTML report, rendered by headless Chromium (Debian's chromium, over the DevTools protocol):
it loads with no console errors and no network request, the screenshot is not blank, the verdict,
matrix and charts are there, it fits a phone's width, and a strict parser accepts the markup."""
import json
import os
import sys
import tempfile
from html.parser import HTMLParser

import chromium
from harness import main, run

BUILD = os.environ.get("GPUVET_BUILD_DIR", "build")
TESTS = os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(__file__), ".."))
# The driver doubles hold the GPU at its power cap (run_power_cap.toml) while a real job burns the CPU.
POWER_CAP = {
    "GPUVET_LIBCUDA": os.path.join(BUILD, "tests", "fakes", "libfakecuda.so"),
    "GPUVET_LIBNVML": os.path.join(BUILD, "tests", "fakes", "libfakenvml.so"),
    "GPUVET_FAKE_SCENARIO": os.path.join(TESTS, "fakes", "scenarios", "run_power_cap.toml"),
}
BURNER = """
import multiprocessing as mp, sys, time
def burn(secs):
    end = time.time() + secs
    while time.time() < end:
        pass
if __name__ == "__main__":
    with mp.Pool(2) as p:
        p.map(burn, [float(sys.argv[1])] * 2)
"""

FIXTURES = os.path.join(os.environ.get("GPUVET_TEST_DIR", os.path.join(os.path.dirname(__file__), "..")),
                        "fixtures", "reports")
# Screenshots stay in the build tree for a person to look at (tests/e2e/html-shots/).
SHOTS = os.path.join(os.environ.get("GPUVET_BUILD_DIR", tempfile.gettempdir()), "tests", "e2e", "html-shots")
VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr"}
# SVG elements written self-closing (<rect/>): the parser reports them as startend.


class StrictParser(HTMLParser):
    """Fails on unclosed or mismatched tags, on a reference to anything outside the page, and on a
    duplicate id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.errors, self.tags = [], set(), [], {}

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k in ("src", "href", "action", "srcset", "xlink:href") and v and not v.startswith("#"):
                self.errors.append(f"<{tag} {k}={v!r}>: a reference outside the page")
            if k == "id":
                if v in self.ids:
                    self.errors.append(f"duplicate id {v!r}")
                self.ids.add(v)
            if k == "style" and "url(" in (v or ""):
                self.errors.append(f"<{tag} style> loads {v!r}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}> at {self.getpos()}")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style" and ("@import" in data or "url(" in data):
            self.errors.append("the stylesheet loads something")


def render(fixture, out_dir, source=None):
    path = os.path.join(out_dir, fixture + ".html")
    code, out, err = run("report", source or os.path.join(FIXTURES, fixture + ".json"), "--html", "-o", path)
    assert code == 0 and out == "", (code, out, err)
    return path, *strict(path)


def strict(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p = StrictParser()
    p.feed(text)
    p.close()
    assert not p.errors, p.errors[:10]
    assert p.stack == [], f"unclosed: {p.stack}"
    assert text.startswith("<!DOCTYPE html>"), text[:40]
    assert "<script" not in text, "the page needs no script"
    return text, p


def load(path, width=1280):
    page = chromium.Page(width=width)
    page.load(path)
    return page


def test_faulty_8gpu_page_loads_clean_and_shows_the_fault():
    with tempfile.TemporaryDirectory() as d:
        path, text, parsed = render("faulty-8gpu", d)
        assert 'http-equiv="Content-Security-Policy" content="default-src \'none\'' in text
        page = load(path)
        try:
            assert page.console_problems() == [], page.console_problems()
            urls = page.requests()
            assert urls == ["file://" + os.path.abspath(path)], urls  # the page itself, nothing else
            verdict = page.evaluate("document.querySelector('#verdict').dataset.verdict")
            assert verdict == "FAIL", verdict
            assert page.evaluate("document.querySelector('#verdict h1').textContent") == "NO-GO"
            heads = page.evaluate("[...document.querySelectorAll('table.matrix thead th')].map(e => e.textContent)")
            assert heads == ["check"] + [f"GPU {i}" for i in range(8)], heads
            # throttling.toml: GPU 1 is hot and clocked down; its health cell is the failed one.
            cell = page.evaluate("[...document.querySelectorAll('table.matrix tbody tr')].find(r => "
                                 "r.cells[0].textContent == 'gpu.health').cells[2].className")
            assert cell == "v-fail", cell
            message = page.evaluate("document.querySelector('#vendor-message').textContent")
            assert "NO-GO" in message and "- gpu.health GPU 1: GPU 1 (H100 SXM5 80GB): clocks are held down" in message, message
            assert "- gpu.burn GPU 1: HW slowdown active in" in message, message
            first = page.evaluate("document.querySelector('#findings article h3').textContent")
            assert "gpu.health" in first and "GPU 1" in first, first
            assert page.evaluate("document.querySelectorAll('#bars svg.chart').length") >= 5
            assert page.evaluate("document.querySelectorAll('#timeline svg.chart.lines').length") >= 3
            bands = page.evaluate("[...document.querySelectorAll('#timeline svg.bands rect.event')].map("
                                  "r => [r.classList.contains('fault'), r.textContent])")
            assert [True, "GPU 1: HW_SLOWDOWN|SW_THERMAL|HW_THERMAL"] in bands, bands
            assert [False, "GPU 6: SW_POWER_CAP"] in bands, bands
            assert page.evaluate("document.querySelectorAll('#p2p svg.heatmap rect.heat').length") == 56
            # Charts drew something: every chart has a size on screen.
            sizes = page.evaluate("[...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width)")
            assert sizes and min(sizes) > 100, sizes
            os.makedirs(SHOTS, exist_ok=True)
            shot = os.path.join(SHOTS, "faulty-8gpu.png")
            page.screenshot(shot)
            assert not chromium.png_is_blank(shot), shot
        finally:
            page.close()


def test_page_fits_a_phone_and_prints():
    with tempfile.TemporaryDirectory() as d:
        path, text, _ = render("healthy-8gpu", d)
        assert '<meta name="viewport" content="width=device-width' in text and "@media print" in text
        assert "prefers-color-scheme:dark" in text
        page = load(path, width=390)
        try:
            assert page.console_problems() == [], page.console_problems()
            # Wide tables scroll inside their box; the page itself does not scroll sideways.
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 391, width
            assert page.evaluate("document.querySelector('#verdict').dataset.verdict") == "WARN"
            os.makedirs(SHOTS, exist_ok=True)
            shot = os.path.join(SHOTS, "healthy-8gpu-phone.png")
            page.screenshot(shot)
            assert not chromium.png_is_blank(shot), shot
        finally:
            page.close()


def test_every_fixture_renders_strictly_valid_markup():
    with tempfile.TemporaryDirectory() as d:
        for name in sorted(os.listdir(FIXTURES)):
            if name.endswith(".json"):
                render(name[:-5], d)


def run_report_dir(d):
    """A trial run on the power-cap double with a real CPU-burning job; returns its report folder."""
    out = os.path.join(d, "run")
    job = os.path.join(d, "burn.py")
    with open(job, "w") as f:
        f.write(BURNER)
    code, _, err = run("run", "--interval", "0.2", "--tag", "box-a", "--note", "one epoch", "--report", out, "--",
                       sys.executable, job, "2", env=POWER_CAP, timeout=120)
    assert code == 0, err
    return out


def test_run_report_page_shows_the_diagnosis_statistics_and_timeline():
    with tempfile.TemporaryDirectory() as d:
        out = run_report_dir(d)
        doc = json.load(open(os.path.join(out, "gpuvet-run.json")))
        written = os.path.join(out, "report.html")
        text, _ = strict(written)  # the page `gpuvet run --report` wrote beside the JSON
        path, again, _ = render("run", d, os.path.join(out, "gpuvet-run.json"))
        assert again == text, "the page from the JSON differs from the one the run wrote"
        assert 'http-equiv="Content-Security-Policy" content="default-src \'none\'' in text
        page = load(path)
        try:
            assert page.console_problems() == [], page.console_problems()
            assert page.requests() == ["file://" + os.path.abspath(path)], page.requests()
            assert page.evaluate("document.querySelector('#verdict').dataset.verdict") == "F1"
            assert "power cap" in page.evaluate("document.querySelector('#verdict h1').textContent")
            primary = page.evaluate("document.querySelector('#primary').textContent")
            assert "700 W" in primary and "What to do:" in primary and "Thresholds and source:" in primary, primary
            seed = page.evaluate("document.querySelector('#seed').textContent")
            assert seed.startswith("GPU utilization peak ≥ 90 %: reached ("), seed
            others = page.evaluate("[...document.querySelectorAll('#diagnosis article h3')].map(e => e.textContent)")
            assert len(others) == 1 + len(doc["run"]["diagnosis"]["others"]), others
            job = page.evaluate("document.querySelector('#job').textContent")
            for want in ("box-a", "one epoch", "burn.py", "wall time", "steady window", "exit code"):
                assert want in job, (want, job)
            heads = page.evaluate("[...document.querySelectorAll('#gpus thead th')].map(e => e.textContent)")
            assert heads[:2] == ["figure", "GPU 0 NVIDIA H100 80GB HBM3"] and heads[2:5] == ["mean", "p5", "p95"], heads
            power = page.evaluate("[...document.querySelectorAll('#gpus tbody tr')].find(r => "
                                  "r.cells[0].textContent == 'power (W)').cells[1].textContent")
            assert power == str(round(doc["run"]["gpus"][0]["power_w"]["mean"])), power
            host = page.evaluate("[...document.querySelectorAll('#host tbody tr')].map(r => r.cells[0].textContent)")
            assert "job CPU (cores)" in host, host
            # Every series of the JSON is on the page: a chart, or one line when it never changed.
            shown = page.evaluate("[...document.querySelectorAll('#timeline [data-series]')].map(e => e.dataset.series)")
            assert {s["key"] for s in doc["series"]} <= set(shown), shown
            assert page.evaluate("document.querySelectorAll('#timeline svg.chart.lines').length") >= 3
            sizes = page.evaluate("[...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width)")
            assert sizes and min(sizes) > 100, sizes
            os.makedirs(SHOTS, exist_ok=True)
            shot = os.path.join(SHOTS, "run-power-cap.png")
            page.screenshot(shot)
            assert not chromium.png_is_blank(shot), shot
        finally:
            page.close()
        phone = load(path, width=390)
        try:
            assert phone.evaluate("document.documentElement.scrollWidth") <= 391
        finally:
            phone.close()
        code, md, err = run("report", os.path.join(out, "gpuvet-run.json"), "--markdown")
        assert code == 0, err
        assert md.startswith("# gpuvet run: Throttled by the power cap"), md[:200]
        assert "GPU utilization peak ≥ 90 %: reached (" in md and "## Also found" in md, md
        assert "| power (W) |" in md and "| job CPU (cores) |" in md, md


def test_plan_page_shows_the_memory_bar_and_the_card_table():
    plan = ("plan", "--model", "llama-2-7b", "--task", "qlora", "--tokens", "1e8", "--prices",
            os.path.join(TESTS, "fixtures", "plan", "prices.toml"))
    code, out, err = run(*plan, "--json")
    assert code == 0, err
    doc = json.loads(out)
    with tempfile.TemporaryDirectory() as d:
        code, out, err = run(*plan, "--html")
        assert code == 0, err
        path = os.path.join(d, "plan.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(out)
        strict(path)
        page = load(path)
        try:
            assert page.console_problems() == [], page.console_problems()
            assert page.requests() == ["file://" + os.path.abspath(path)], page.requests()
            assert page.evaluate("document.querySelector('#verdict').dataset.verdict") == "fits"
            # One bar part per item alive at the peak (training: the largest of the three moments)
            # and one for the margin, each sized as the JSON says.
            mem = doc["memory"]
            items = [i for i in mem["items"] if mem["peak_moment"] is None or mem["peak_moment"] in i["moments"]]
            parts = page.evaluate("[...document.querySelectorAll('#memory svg.stacked rect.seg')].map("
                                  "r => [r.textContent, r.getBoundingClientRect().width])")
            shown = [i for i in items if i["bytes_per_gpu"] > 0]
            assert len(parts) == len(shown) + (1 if doc["memory"]["margin_bytes_per_gpu"] > 0 else 0), parts
            for item, (title, width) in zip(shown, parts):
                assert title == f"{item['label']}: {item['gib_per_gpu']:.2f} GiB", (title, item)
                assert width > 0, parts
            total = sum(w for _, w in parts)
            big = max(shown, key=lambda i: i["bytes_per_gpu"])
            share = parts[shown.index(big)][1] / total
            assert abs(share - big["bytes_per_gpu"] / doc["memory"]["need_bytes_per_gpu"]) < 0.01, share
            heads = page.evaluate("[...document.querySelectorAll('#cards thead th')].map(e => e.textContent)")
            assert heads[:4] == ["GPU", "GiB", "fits", "cards"] and "hours" in heads and "cost USD" in heads, heads
            rows = page.evaluate("[...document.querySelectorAll('#cards tbody tr')].map(r => "
                                 "[r.dataset.sku, r.cells[2].textContent, r.cells[3].textContent])")
            fitting = [g for g in doc["gpus"] if g["cards"]]
            assert rows[0] == [fitting[0]["sku"], "yes", str(fitting[0]["cards"])], (rows[0], fitting[0])
            sizes = page.evaluate("[...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width)")
            assert sizes and min(sizes) > 100, sizes
            os.makedirs(SHOTS, exist_ok=True)
            shot = os.path.join(SHOTS, "plan-qlora.png")
            page.screenshot(shot)
            assert not chromium.png_is_blank(shot), shot
        finally:
            page.close()
        code, _, err = run(*plan, "--html", "--json")
        assert code == 2, err


def test_plan_page_lists_the_levers_as_the_json_does():
    plan = ("plan", "--model", "llama-3-70b", "--task", "lora", "--seq", "4096")
    code, out, err = run(*plan, "--json")
    assert code == 0, err
    levers = json.loads(out)["levers"]["list"]
    with tempfile.TemporaryDirectory() as d:
        code, out, err = run(*plan, "--html")
        assert code == 0, err
        path = os.path.join(d, "plan.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(out)
        strict(path)
        page = load(path)
        try:
            assert page.console_problems() == [], page.console_problems()
            rows = page.evaluate("[...document.querySelectorAll('#levers tbody tr')].map(r => "
                                 "[r.dataset.lever, r.cells[2].textContent, r.cells[4].textContent])")
            assert [r[0] for r in rows] == [v["key"] for v in levers], rows
            for (key, option, need), v in zip(rows, levers):
                assert option == v["option"] and abs(float(need) - v["need_bytes_per_gpu"] / 2**30) < 0.06, (key, need)
            shot = os.path.join(SHOTS, "plan-levers.png")
            os.makedirs(SHOTS, exist_ok=True)
            page.screenshot(shot)
            assert not chromium.png_is_blank(shot), shot
        finally:
            page.close()


if __name__ == "__main__":
    main(globals())
