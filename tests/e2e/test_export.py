"""gpuvet export end to end: the real binary on the fake NVML, scraped over HTTP on a loopback port.

What must hold: dcgm-exporter's metric names, labels, HELP and TYPE lines with the scenario's values;
absent facts have no series; promtool accepts the page; a real Prometheus server scrapes it and its
query API returns the series; the last check report's verdicts and figures become series and are re-read
when the file changes; a lost GPU drops its series while the endpoint stays up; a driver that stops
answering never holds up a scrape, and its stale values are dropped after the bound; a port in use, a bad
--listen, a bad --check-report and a missing driver end with a clear message and exit 2 or 3;
SIGTERM and Ctrl-C stop it with exit 0. Every listener is on 127.0.0.1 (never another interface).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import harness
from harness import NO_DRIVER, fake_env, main, run, slow

TESTS = os.environ.get("GPUVET_TEST_DIR", "tests")
SCEN = os.path.join(TESTS, "fakes", "scenarios")

SERIES = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
H100_MODEL = "NVIDIA H100 80GB HBM3"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scenario_file(tmp, extra="", base="healthy_8x_h100_sxm"):
    """A scenario: a shipped one with `extra` TOML appended (its GPU tables)."""
    with open(os.path.join(SCEN, base + ".toml")) as f:
        text = f.read()
    path = os.path.join(tmp, "scenario.toml")
    with open(path, "w") as f:
        f.write(text + "\n" + extra + "\n")
    return path


def env_for(scenario_path):
    e = fake_env("healthy_8x_h100_sxm")
    e["GPUVET_FAKE_SCENARIO"] = scenario_path
    return e


class Exporter:
    """gpuvet export running in the background on a free loopback port."""

    def __init__(self, scenario_path, *args, env=None):
        self.port = free_port()
        e = dict(os.environ)
        e.update(env or env_for(scenario_path))
        self.args = ["export", "--listen", f"127.0.0.1:{self.port}", *args]
        self.proc = subprocess.Popen([harness.GPUVET, *self.args], env=e, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path, timeout=5):
        """(status, body); a 5xx answer is returned, not raised."""
        try:
            with urllib.request.urlopen(self.url(path), timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def wait_healthy(self, timeout_s=20):
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"gpuvet export exited {self.proc.returncode}: {self.proc.stderr.read()}")
            try:
                last = self.get("/healthz", timeout=2)
                if last[0] == 200:
                    return
            except (urllib.error.URLError, ConnectionError, OSError) as e:
                last = e
            time.sleep(0.05)
        raise AssertionError(f"/healthz not 200 within {timeout_s} s: {last}")

    def metrics(self):
        status, body = self.get("/metrics")
        assert status == 200, (status, body)
        return body

    def stop(self, sig=signal.SIGTERM, limit_s=5):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"gpuvet export did not stop within {limit_s} s of {sig!r}: {err}")
        harness.check_no_crash(self.args, self.proc.returncode, err)
        return self.proc.returncode, err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def parse(page):
    """[(name, {label: value}, float)] of every series line."""
    out = []
    for line in page.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line)
        assert m, f"not an exposition line: {line!r}"
        labels = {k: v for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def series(page, name, **want):
    return [(labels, v) for n, labels, v in parse(page) if n == name and all(labels.get(k) == w for k, w in want.items())]


def one(page, name, **want):
    found = series(page, name, **want)
    assert len(found) == 1, f"{name}{want}: {len(found)} series, wanted one:\n" + "\n".join(
        l for l in page.splitlines() if l.startswith(name))
    return found[0]


def wait_for(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        r = predicate()
        if r:
            return r
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout_s} s")


BUSY_GPU2 = """
[gpu.2]
utilization_gpu_percent = 87
utilization_memory_percent = 41
memory_used_mib = 20480
power_draw_w = 512.5
temperature_c = 61
sm_clock_mhz = 1755
clock_event_reasons = ["sw_power_cap", "hw_slowdown"]
pcie_replay_counter = 7
remapped_rows_correctable = 3
pcie_rx_kb_per_s = 2000
ecc_volatile_corrected = 5

[gpu.3]
memory_temperature_supported = false
remapped_rows_supported = false
"""


def test_dcgm_names_labels_and_values():
    with tempfile.TemporaryDirectory() as tmp, Exporter(scenario_file(tmp, BUSY_GPU2), "--interval", "0.2") as ex:
        ex.wait_healthy()
        page = ex.metrics()
        # dcgm-exporter's HELP and TYPE lines, its labels, the scenario's values.
        assert "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" in page
        assert "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n" in page
        assert "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter\n" in page
        labels, v = one(page, "DCGM_FI_DEV_GPU_UTIL", gpu="2")
        assert v == 87
        assert labels == {"gpu": "2", "UUID": "GPU-fa4e0000-0000-4000-8000-000000000003",
                          "pci_bus_id": "00000000:3A:00.0", "device": "nvidia2", "modelName": H100_MODEL,
                          "hostname": socket.gethostname(), "DCGM_FI_DRIVER_VERSION": "570.124.06"}, labels
        assert len(series(page, "DCGM_FI_DEV_GPU_UTIL")) == 8
        assert one(page, "DCGM_FI_DEV_GPU_UTIL", gpu="0")[1] == 0
        assert one(page, "DCGM_FI_DEV_MEM_COPY_UTIL", gpu="2")[1] == 41
        assert one(page, "DCGM_FI_DEV_FB_USED", gpu="2")[1] == 20480
        total_mib, reserved_mib = 81559, 564  # the fake's H100 (tests/fakes/README.md)
        assert one(page, "DCGM_FI_DEV_FB_FREE", gpu="2")[1] == total_mib - reserved_mib - 20480
        assert one(page, "DCGM_FI_DEV_FB_RESERVED", gpu="2")[1] == reserved_mib
        # The energy counter's mean over the sampler's interval (the first, a point read).
        assert abs(one(page, "DCGM_FI_DEV_POWER_USAGE", gpu="2")[1] - 512.5) <= 5.2
        assert one(page, "DCGM_FI_DEV_GPU_TEMP", gpu="2")[1] == 61
        assert one(page, "DCGM_FI_DEV_MEMORY_TEMP", gpu="2")[1] == 38
        assert one(page, "DCGM_FI_DEV_SM_CLOCK", gpu="2")[1] == 1755
        assert one(page, "DCGM_FI_DEV_MEM_CLOCK", gpu="2")[1] == 2619
        assert one(page, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", gpu="2")[1] == 7
        assert one(page, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", gpu="2")[1] == 3
        assert one(page, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", gpu="2")[1] == 0
        assert one(page, "DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu="2")[1] == 0
        assert one(page, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", gpu="2")[1] == 5
        assert one(page, "DCGM_FI_DEV_XID_ERRORS", gpu="2")[1] == 0  # watched, none seen
        assert one(page, "DCGM_FI_PROF_PCIE_RX_BYTES", gpu="2")[1] == 2000 * 1024  # NVML's KB/s, KB = 1024 bytes
        # gpuvet's own: reasons as labelled gauges, limits beside their defaults, links beside their maxima.
        assert one(page, "gpuvet_clock_event_reason_active", gpu="2", reason="sw_power_cap")[1] == 1
        assert one(page, "gpuvet_clock_event_reason_active", gpu="2", reason="hw_slowdown")[1] == 1
        assert one(page, "gpuvet_clock_event_reason_active", gpu="2", reason="hw_thermal_slowdown")[1] == 0
        assert one(page, "gpuvet_clock_event_reason_active", gpu="0", reason="sw_power_cap")[1] == 0
        assert one(page, "gpuvet_power_default_limit_watts", gpu="2")[1] == 700
        assert one(page, "gpuvet_pcie_link_generation", gpu="2")[1] == 5
        assert one(page, "gpuvet_pcie_link_width_max", gpu="2")[1] == 16
        assert one(page, "gpuvet_gpu_lost", gpu="2")[1] == 0
        assert one(page, "gpuvet_sample_stale")[1] == 0
        # Absent facts have no series, never a sentinel: GPU 3 has no memory sensor and no row remapping,
        # and the fake NVML has no GPM (so no DCGM_FI_PROF_SM_ACTIVE at all).
        assert series(page, "DCGM_FI_DEV_MEMORY_TEMP", gpu="3") == []
        assert series(page, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", gpu="3") == []
        assert len(series(page, "DCGM_FI_DEV_MEMORY_TEMP")) == 7
        assert "DCGM_FI_PROF_SM_ACTIVE" not in page and "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" not in page
        # The index and an unknown path.
        status, body = ex.get("/")
        assert status == 200 and "/metrics" in body and "/healthz" in body
        assert ex.get("/nothing")[0] == 404
        code, err = ex.stop()
        assert code == 0, err


# GPU 5 on a driver without the sample buffers and counters (MIG, pre-Volta): its figures are point reads.
POINT_READ_GPU5 = BUSY_GPU2 + """
[gpu.5]
samples_supported = false
energy_supported = false
violation_supported = false
"""


def test_each_figure_says_how_it_was_obtained():
    """gpuvet_figure_origin_info names the way each figure of the last sample was obtained, and the
    violation counters' shares are served beside the reason bits."""
    with tempfile.TemporaryDirectory() as tmp, Exporter(scenario_file(tmp, POINT_READ_GPU5), "--interval", "0.2") as ex:
        ex.wait_healthy()
        # Past the first sample, whose counters have no earlier read to differ from.
        wait_for(lambda: any(v >= 3 for _, v in series(ex.metrics(), "gpuvet_samples_total")), 20, "three samples")
        page = ex.metrics()
        assert "# TYPE gpuvet_figure_origin_info gauge\n" in page

        def origin(gpu, figure):
            found = [l["origin"] for l, v in series(page, "gpuvet_figure_origin_info", gpu=gpu, figure=figure)
                     if v == 1]
            assert len(found) == 1, (gpu, figure, found)
            return found[0]

        want = {"utilization": "interval_mean", "power": "counter_difference", "sm_clock": "interval_mean",
                "throttle": "counter_difference"}
        assert {f: origin("2", f) for f in want} == want
        assert {f: origin("5", f) for f in want} == {f: "point_read" for f in want}
        # GPU 2 is power-capped all along: the counter holds the clocks down the whole interval.
        assert abs(one(page, "gpuvet_clocks_held_down_percent", gpu="2", limiter="power")[1] - 100) <= 0.5
        assert one(page, "gpuvet_clocks_held_down_percent", gpu="2", limiter="thermal")[1] == 0
        assert series(page, "gpuvet_clocks_held_down_percent", gpu="5") == []
        code, err = ex.stop()
        assert code == 0, err


def test_promtool_accepts_the_page():
    """promtool parses the page; its only lint findings are about dcgm-exporter's own names, which are
    kept on purpose (upper case, counters without _total, the camelCase modelName label)."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing: run scripts/install-deps --test (Debian package prometheus)"
    report = os.path.join(tempfile.mkdtemp(), "check.json")
    with tempfile.TemporaryDirectory() as tmp:
        scen = scenario_file(tmp, BUSY_GPU2)
        code, out, _ = run("check", "--only", "gpu.identity,gpu.pcie_link", "--json", env=env_for(scen))
        with open(report, "w") as f:
            f.write(out)
        with Exporter(scen, "--check-report", report) as ex:
            ex.wait_healthy()
            page = ex.metrics()
            ex.stop()
    p = subprocess.run([promtool, "check", "metrics"], input=page, capture_output=True, text=True, timeout=60)
    problems = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    allowed_dcgm = ('counter metrics should have "_total" suffix', "metric name should not include type 'counter'")
    camel = "label names should be written in 'snake_case' not 'camelCase'"
    for line in problems:
        name, _, what = line.partition(" ")
        assert "parsing error" not in line and not line.startswith("error"), \
            f"promtool could not parse the page: {line}\n{page[:2000]}"
        if what == camel:
            continue  # dcgm-exporter's modelName and UUID labels, on its series and on gpuvet's per-GPU ones
        assert name.startswith("DCGM_FI_") and what in allowed_dcgm, f"promtool: {line}"
    assert p.returncode in (0, 3), (p.returncode, problems)  # 3: lint findings only
    assert "gpuvet_check_verdict" in page


def test_check_report_verdicts_and_figures():
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "check.json")
        doc = {"tool": "gpuvet", "schema_version": 3, "command": "check", "verdict": "FAIL", "checks": [
            {"key": "gpu.memory_bandwidth", "gpu": 0, "verdict": "FAIL", "measurements": [
                {"key": "copy_gbps", "unit": "GB/s", "value": 2100.5, "gpu": 0,
                 "reference": {"spec": 3350, "fail_below": 2345.0}},
                {"key": "triad_gbps", "unit": "GB/s", "value": None, "absent_reason": "interrupted", "gpu": 0}]},
            {"key": "host.cpu", "gpu": None, "verdict": "PASS", "measurements": [
                {"key": "cores", "unit": "", "value": 64, "reference": None}]}]}
        with open(report, "w") as f:
            json.dump(doc, f)
        with Exporter(scenario_file(tmp), "--check-report", report, "--interval", "0.2") as ex:
            ex.wait_healthy()
            page = ex.metrics()
            assert one(page, "gpuvet_check_verdict", check="gpu.memory_bandwidth", gpu="0", verdict="FAIL")[1] == 1
            assert one(page, "gpuvet_check_verdict", check="gpu.memory_bandwidth", gpu="0", verdict="PASS")[1] == 0
            labels, v = one(page, "gpuvet_check_verdict", check="host.cpu", verdict="PASS")
            assert v == 1 and "gpu" not in labels  # a host check has no GPU
            assert one(page, "gpuvet_check_run_verdict", verdict="FAIL")[1] == 1
            m = dict(check="gpu.memory_bandwidth", gpu="0", measurement="copy_gbps", unit="GB/s")
            assert one(page, "gpuvet_check_measurement", **m)[1] == 2100.5
            assert one(page, "gpuvet_check_reference_spec", **m)[1] == 3350
            assert one(page, "gpuvet_check_reference_fail_below", **m)[1] == 2345
            assert series(page, "gpuvet_check_measurement", measurement="triad_gbps") == []  # absent: no series
            assert one(page, "gpuvet_check_report_readable")[1] == 1
            # A new check run rewrites the report (atomically): the next ticks read it again.
            doc["verdict"] = "PASS"
            doc["checks"][0]["verdict"] = "PASS"
            doc["checks"][0]["measurements"][0]["value"] = 3001.0
            with open(report + ".tmp", "w") as f:
                json.dump(doc, f)
            os.replace(report + ".tmp", report)
            page = wait_for(lambda: (lambda p: p if series(p, "gpuvet_check_verdict", check="gpu.memory_bandwidth",
                                                              verdict="PASS")[0][1] == 1 else None)(ex.metrics()),
                            10, "the rewritten report's verdict")
            assert one(page, "gpuvet_check_measurement", **m)[1] == 3001
            assert one(page, "gpuvet_check_run_verdict", verdict="PASS")[1] == 1
            # A report that turns invalid keeps the last good figures and says so.
            with open(report + ".tmp", "w") as f:
                f.write("{ not json")
            os.replace(report + ".tmp", report)
            page = wait_for(lambda: (lambda p: p if one(p, "gpuvet_check_report_readable")[1] == 0 else None)(
                ex.metrics()), 10, "the invalid report noticed")
            assert one(page, "gpuvet_check_measurement", **m)[1] == 3001
            assert "# gpuvet: --check-report:" in page
            assert ex.stop()[0] == 0


def test_real_check_report_becomes_series():
    """The report a real `gpuvet check --json` writes, not a hand-made one."""
    with tempfile.TemporaryDirectory() as tmp:
        scen = scenario_file(tmp, "[gpu.1]\npcie_width_current = 8\n")
        code, out, err = run("check", "--only", "gpu.identity,gpu.pcie_link", "--json", env=env_for(scen))
        doc = json.loads(out)
        report = os.path.join(tmp, "check.json")
        with open(report, "w") as f:
            f.write(out)
        with Exporter(scen, "--check-report", report) as ex:
            ex.wait_healthy()
            page = ex.metrics()
            ex.stop()
        for c in doc["checks"]:
            want = {"check": c["key"], "verdict": c["verdict"]}
            if c["gpu"] is not None:
                want["gpu"] = str(c["gpu"])
            found = [(l, v) for l, v in series(page, "gpuvet_check_verdict", **want)
                     if ("gpu" in l) == (c["gpu"] is not None)]
            assert found and found[0][1] == 1, (c["key"], c["gpu"], c["verdict"])
        link = [c for c in doc["checks"] if c["key"] == "gpu.pcie_link" and c["gpu"] == 1]
        assert link and link[0]["verdict"] in ("WARN", "FAIL"), link
        for m in link[0]["measurements"]:
            if m["value"] is not None:
                assert one(page, "gpuvet_check_measurement", check="gpu.pcie_link", gpu="1", measurement=m["key"])[1] \
                    == m["value"]


@slow
def test_real_prometheus_scrapes_it():
    prometheus = shutil.which("prometheus")
    assert prometheus, "prometheus missing: run scripts/install-deps --test (Debian package prometheus)"
    with tempfile.TemporaryDirectory() as tmp, Exporter(scenario_file(tmp, BUSY_GPU2), "--interval", "0.5") as ex:
        ex.wait_healthy()
        prom_port = free_port()
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: gpuvet\n"
                    f"    static_configs:\n      - targets: ['127.0.0.1:{ex.port}']\n")
        server = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
                                   f"--web.listen-address=127.0.0.1:{prom_port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            def query():
                url = f"http://127.0.0.1:{prom_port}/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL"
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        d = json.load(r)
                except (urllib.error.URLError, ConnectionError, OSError):
                    return None
                res = d.get("data", {}).get("result", [])
                return res if len(res) == 8 else None

            result = wait_for(query, 60, "Prometheus returning 8 DCGM_FI_DEV_GPU_UTIL series")
            by_gpu = {r["metric"]["gpu"]: r for r in result}
            m = by_gpu["2"]["metric"]
            assert m["__name__"] == "DCGM_FI_DEV_GPU_UTIL" and m["job"] == "gpuvet"
            assert m["instance"] == f"127.0.0.1:{ex.port}"
            assert m["UUID"] == "GPU-fa4e0000-0000-4000-8000-000000000003" and m["device"] == "nvidia2"
            assert m["modelName"] == H100_MODEL and m["pci_bus_id"] == "00000000:3A:00.0"
            assert m["hostname"] == socket.gethostname()
            assert float(by_gpu["2"]["value"][1]) == 87 and float(by_gpu["0"]["value"][1]) == 0
            url = (f"http://127.0.0.1:{prom_port}/api/v1/query?query="
                   + urllib.request.quote('gpuvet_clock_event_reason_active{reason="hw_slowdown"} == 1'))
            with urllib.request.urlopen(url, timeout=5) as r:
                hot = json.load(r)["data"]["result"]
            assert [h["metric"]["gpu"] for h in hot] == ["2"], hot
            with urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/api/v1/targets", timeout=5) as r:
                targets = json.load(r)["data"]["activeTargets"]
            assert targets and targets[0]["health"] == "up", targets
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        assert ex.stop()[0] == 0


def test_gpm_metrics_are_ratios_like_dcgm_and_absent_without_gpm():
    """GPU 0 reports GPM (percentages in NVML, ratios in DCGM's profiling fields); GPU 1 has no GPM and
    GPU 2 is in MIG mode: no DCGM_FI_PROF_* series for them, never 0."""
    with tempfile.TemporaryDirectory() as tmp, \
            Exporter(scenario_file(tmp, base="gpm_metrics"), "--interval", "0.1") as ex:
        ex.wait_healthy()

        def later_values():
            p = ex.metrics()
            found = series(p, "DCGM_FI_PROF_SM_ACTIVE", gpu="0")
            return p if found and found[0][1] == 0.91 else None

        page = wait_for(later_values, 10, "GPU 0's SM activity of 91%")
        assert "# HELP DCGM_FI_PROF_SM_ACTIVE The ratio of cycles an SM has at least 1 warp assigned.\n" in page
        assert one(page, "DCGM_FI_PROF_DRAM_ACTIVE", gpu="0")[1] == 0.805
        assert one(page, "DCGM_FI_PROF_SM_OCCUPANCY", gpu="0")[1] == 0.12
        assert one(page, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", gpu="0")[1] == 0.04
        for gpu in ("1", "2"):
            for name in ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                         "DCGM_FI_PROF_DRAM_ACTIVE"):
                assert series(page, name, gpu=gpu) == [], (name, gpu)
        assert one(page, "DCGM_FI_DEV_GPU_UTIL", gpu="1")[1] == 0  # the rest of GPU 1 is there
        assert ex.stop()[0] == 0


def test_xid_errors_show_the_last_xid_seen():
    extra = "[gpu.4]\nxid_events = [{ after_s = 0.3, xid = 31 }, { after_s = 0.6, xid = 48 }]\n"
    with tempfile.TemporaryDirectory() as tmp, Exporter(scenario_file(tmp, extra), "--interval", "0.1") as ex:
        ex.wait_healthy()
        page = wait_for(lambda: (lambda p: p if one(p, "DCGM_FI_DEV_XID_ERRORS", gpu="4")[1] == 48 else None)(
            ex.metrics()), 10, "Xid 48 on GPU 4")
        assert one(page, "DCGM_FI_DEV_XID_ERRORS", gpu="3")[1] == 0
        assert "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n" in page
        assert ex.stop()[0] == 0


def test_lost_gpu_drops_its_series_and_the_endpoint_stays_up():
    # GPU 1 falls off the bus after some ticks (each tick makes a few dozen NVML calls per GPU).
    with tempfile.TemporaryDirectory() as tmp, \
            Exporter(scenario_file(tmp, "[gpu.1]\nlost_after_calls = 400\n"), "--interval", "0.1") as ex:
        ex.wait_healthy()
        page = ex.metrics()
        assert one(page, "gpuvet_gpu_lost", gpu="1")[1] == 0
        assert series(page, "DCGM_FI_DEV_GPU_UTIL", gpu="1"), "GPU 1 should be there before it is lost"
        page = wait_for(lambda: (lambda p: p if one(p, "gpuvet_gpu_lost", gpu="1")[1] == 1 else None)(ex.metrics()),
                        30, "GPU 1 reported lost")
        assert series(page, "DCGM_FI_DEV_GPU_UTIL", gpu="1") == []
        assert series(page, "DCGM_FI_DEV_POWER_USAGE", gpu="1") == []
        assert series(page, "gpuvet_clock_event_reason_active", gpu="1") == []
        assert len(series(page, "DCGM_FI_DEV_GPU_UTIL")) == 7
        assert one(page, "gpuvet_gpu_lost", gpu="0")[1] == 0
        status, body = ex.get("/healthz")
        assert status == 200 and body.strip() == "ok", (status, body)
        assert ex.proc.poll() is None
        assert ex.stop()[0] == 0


@slow
def test_slow_nvml_never_holds_up_a_scrape_and_stale_values_are_dropped():
    # From 1 s on, every NVML call on GPU 0 takes 0.7 s: a tick then takes about half a minute, far
    # beyond the bound (3 intervals + 5 s = 5.6 s at --interval 0.2).
    extra = "[[gpu.0.changes]]\nafter_s = 1\ncall_delay_ms = 700\n"
    with tempfile.TemporaryDirectory() as tmp, Exporter(scenario_file(tmp, extra), "--interval", "0.2") as ex:
        ex.wait_healthy()
        slowest = 0.0
        start = time.monotonic()
        stale_page = None
        while time.monotonic() - start < 20:
            t0 = time.monotonic()
            page = ex.metrics()
            slowest = max(slowest, time.monotonic() - t0)
            if one(page, "gpuvet_sample_stale")[1] == 1:
                stale_page = page
                break
            time.sleep(0.2)
        assert stale_page, "the stalled sampler was never reported stale"
        stale_after = time.monotonic() - start
        assert stale_after >= 5.0, stale_after  # not before the bound (after 1 s of fast ticks)
        assert slowest < 2.0, f"a scrape took {slowest:.2f} s while NVML was slow (a tick takes ~20 s)"
        assert one(stale_page, "gpuvet_sample_age_seconds")[1] > 5.6
        assert "DCGM_FI_DEV_GPU_UTIL" not in stale_page and "gpuvet_gpu_lost" not in stale_page
        assert "the driver is not answering in time" in stale_page
        status, body = ex.get("/healthz")
        assert status == 503 and body.startswith("stale:"), (status, body)
        # An orderly stop does not wait for the stuck tick (about 20 s of 0.7 s calls): 2 s of grace,
        # then the process leaves the sampler inside its call. 10 s leaves room for a loaded machine.
        t0 = time.monotonic()
        code, err = ex.stop(limit_s=12)
        assert code == 0, err
        assert time.monotonic() - t0 < 10
        assert "still inside a driver call" in err


def test_old_driver_omits_what_it_lacks_and_mig_is_said():
    """An R440-era NVML lacks field values, PCIe throughput and row remapping: those series are absent
    (never 0) while the rest is served; a GPU in MIG mode is flagged and noted."""
    with tempfile.TemporaryDirectory() as tmp:
        env = fake_env("old_driver", old=True)
        with Exporter(None, "--interval", "0.2", env=env) as ex:
            ex.wait_healthy()
            page = ex.metrics()
            assert len(series(page, "DCGM_FI_DEV_GPU_UTIL")) == 8
            assert one(page, "DCGM_FI_DEV_GPU_UTIL", gpu="0")[0]["DCGM_FI_DRIVER_VERSION"] == "440.118.02"
            for name in ("DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                         "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "gpuvet_mig_mode"):
                assert series(page, name) == [], name
            assert ex.stop()[0] == 0
        with Exporter(scenario_file(tmp, base="mig_enabled")) as ex:
            ex.wait_healthy()
            page = ex.metrics()
            assert one(page, "gpuvet_mig_mode", gpu="0")[1] == 1
            assert one(page, "gpuvet_mig_mode", gpu="2")[1] == 0  # pending only
            assert "# gpuvet: GPU 0 is in MIG mode" in page
            assert ex.stop()[0] == 0


def test_port_in_use_is_exit_2_naming_the_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = run("export", "--listen", f"127.0.0.1:{port}", env=env_for(scenario_file(tmp)),
                                 timeout=30)
    assert code == 2, (code, err)
    assert f"port {port}" in err and "already in use" in err and "--listen" in err, err


def test_bad_listen_is_exit_2():
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(scenario_file(tmp))
        for value, words in [("9400", "no ':PORT'"), ("127.0.0.1:", "no port"), ("127.0.0.1:99999", "65535"),
                             ("127.0.0.1:http", "not a number"), ("::1:9400", "brackets"),
                             ("[::1:9400", "no ']'"), ("[zz]:9400", "not an IPv6 address"),
                             ("host name:9400", "not an address")]:
            code, out, err = run("export", "--listen", value, env=env, timeout=30)
            assert code == 2, (value, code, err)
            assert words in err and "--listen" in err, (value, err)


def test_bad_interval_is_exit_2():
    for value in ("0.01", "2h", "nan", "-1"):
        code, _, err = run("export", "--interval", value, env=NO_DRIVER, timeout=30)
        assert code == 2 and "--interval" in err and "0.1 s" in err, (value, code, err)


def test_bad_check_report_is_exit_2():
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(scenario_file(tmp))
        port = free_port()
        code, _, err = run("export", "--listen", f"127.0.0.1:{port}", "--check-report", f"{tmp}/none.json",
                           env=env, timeout=30)
        assert code == 2 and "--check-report" in err, (code, err)
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"tool": "other"}')
        code, _, err = run("export", "--listen", f"127.0.0.1:{port}", "--check-report", bad, env=env, timeout=30)
        assert code == 2 and "not gpuvet" in err and "bad.json" in err, (code, err)


def test_no_driver_is_exit_3_at_once():
    t0 = time.monotonic()
    code, out, err = run("export", "--listen", f"127.0.0.1:{free_port()}", env=NO_DRIVER, timeout=30)
    assert code == 3, (code, err)
    assert "NVML" in err or "driver" in err, err
    assert time.monotonic() - t0 < 10


def test_driver_listing_no_gpu_is_exit_3_before_listening():
    code, out, err = run("export", "--listen", f"127.0.0.1:{free_port()}", env=fake_env("driver_lists_no_gpu"),
                         timeout=30)
    assert code == 3, (code, err)
    assert "lists no GPU" in err and "/metrics" not in err, err


def test_bad_gpu_index_is_exit_2():
    with tempfile.TemporaryDirectory() as tmp:
        code, out, err = run("export", "--listen", f"127.0.0.1:{free_port()}", "--gpus", "9",
                             env=env_for(scenario_file(tmp)), timeout=30)
    assert code == 2 and "GPU 9 does not exist" in err, (code, err)


def test_ctrl_c_stops_with_exit_0_and_selected_gpus_only():
    with tempfile.TemporaryDirectory() as tmp, Exporter(scenario_file(tmp), "--gpus", "1,3") as ex:
        ex.wait_healthy()
        page = ex.metrics()
        assert sorted(l["gpu"] for l, _ in series(page, "DCGM_FI_DEV_GPU_UTIL")) == ["1", "3"]
        code, err = ex.stop(signal.SIGINT)
        assert code == 0, err
        assert "gpuvet export: stopping" in err and "stopped" in err
        assert "report" not in err, err  # export writes no report: the stop message must not promise one


def test_help_states_the_defaults_and_exit_codes():
    code, out, err = run("export", "--help")
    assert code == 0
    for words in ("127.0.0.1:9400", "--check-report", "/healthz", "Exit codes", "3 intervals + 5 s"):
        assert words in out, words


# A job busy 60 % of every 2 s of scenario time, which runs 10x the wall clock: a 0.2 s tick covers one
# whole period, so an interval mean reads 60 % at any phase while a point read lands in one phase.
PERIODIC_JOB = """gpu_count = 2
time_scale = 10
[all]
gpm_supported = false
utilization_gpu_percent = 100
power_draw_w = 600.0
load_idle_power_w = 90.0
load_period_s = 2.0
load_duty = 0.6
load_phase_s = 0.37
"""


@slow
def test_top_run_and_export_agree_on_a_periodic_job():
    """top --log, export's DCGM_FI_DEV_GPU_UTIL and run's summary read the same periodic job at its duty."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "periodic.toml")
        with open(path, "w") as f:
            f.write(PERIODIC_JOB)
        env = env_for(path)
        log = os.path.join(tmp, "top.jsonl")
        code, _, err = run("top", "--log", log, "--format", "jsonl", "--interval", "0.2", "--duration", "3",
                           env=env, timeout=60)
        assert code == 0, err
        with open(log) as f:
            rows = [json.loads(line) for line in f][1:]
        top = [r["utilization.gpu"] for r in rows if r["index"] == 0 and r["t_s"] >= 0.5]
        assert top and all(r["utilization.origin"] == "interval mean" for r in rows if r["t_s"] >= 0.5), rows[-2:]
        with Exporter(path, "--interval", "0.2") as ex:
            ex.wait_healthy()
            time.sleep(0.6)  # past the first ticks, whose intervals start at NVML's start
            scraped, watts = [], []
            for _ in range(10):
                page = ex.metrics()
                scraped.append(one(page, "DCGM_FI_DEV_GPU_UTIL", gpu="0")[1])
                watts.append(one(page, "DCGM_FI_DEV_POWER_USAGE", gpu="0")[1])
                time.sleep(0.2)
        with tempfile.TemporaryDirectory() as d:
            code, _, err = run("run", "--interval", "0.2", "--report", d, "--", "sleep", "3", env=env, timeout=60)
            assert code == 0, err
            doc = json.load(open(os.path.join(d, "gpuvet-run.json")))
        ran = doc["run"]["gpus"][0]["utilization_percent"]["mean"]
        means = {"top": sum(top) / len(top), "export": sum(scraped) / len(scraped), "run": ran}
        for who, m in means.items():
            assert abs(m - 60) <= 5, (who, means, top, scraped)
        # Power: 0.6 x 600 W + 0.4 x 90 W = 396 W from the energy counter, within 5 % on average.
        assert abs(sum(watts) / len(watts) - 396) <= 20, watts


if __name__ == "__main__":
    main(globals())
