"""AMD GPUs through the AMD SMI and ROCm SMI doubles: inventory, the kernel-free checks of `check`, the
orders, a box with both vendors and one with neither, top, export and run on AMD samples."""
import json
import os
import re
import tempfile

import harness
from harness import NO_DRIVER, amd_env, fake_env, main, run, run_json, slow

INVENTORY_CHECKS = "gpu.driver,gpu.identity,gpu.tenancy,gpu.health,gpu.pcie_link,gpu.nvlink"


def fact(gpu, key):
    v = gpu[key]
    return v["value"] if isinstance(v, dict) else v


def check(env, expect="8x MI300X", checks=INVENTORY_CHECKS, *extra):
    args = ["check", "--quick", "--only", checks + ",order"]
    if expect:
        args += ["--expect", expect]
    code, doc, err = run_json(*args, *extra, env=env)
    verdicts, by_key = {}, {}
    for c in doc["checks"]:
        verdicts.setdefault(c["key"], {})[c["gpu"]] = c["verdict"]
        by_key.setdefault(c["key"], {})[c["gpu"]] = c
    return code, doc, verdicts, by_key


def test_inventory_of_a_healthy_8x_mi300x():
    code, doc, err = run_json("inventory", env=amd_env("amd_mi300x_healthy"))
    assert code == 0, err
    d = doc["driver"]["amd"]
    assert d["present"] is True and d["library"] == "AMD SMI", d
    assert d["driver_version"]["value"] == "6.8.5" and d["library_version"]["value"] == "24.7.1.0", d
    gpus = doc["gpus"]
    assert len(gpus) == 8
    g = gpus[0]
    assert g["vendor"] == "AMD"
    assert fact(g, "name") == "AMD Instinct MI300X"
    assert fact(g, "pci_vendor_id") == 0x1002 and fact(g, "pci_device_id") == 0x74a1
    assert fact(g, "gfx_target") == "gfx942" and fact(g, "architecture") == "CDNA 3"
    assert fact(g, "compute_units") == 304
    assert fact(g, "memory_total_bytes") == 206141652992
    assert fact(g, "compute_partition") == "SPX" and fact(g, "memory_partition") == "NPS1"
    assert fact(g, "power_limit_w") == 750 and fact(g, "power_default_limit_w") == 750
    assert fact(g, "temperature_c") == 42 and fact(g, "temperature_memory_c") == 35
    assert g["temperature_edge_c"]["value"] is None and g["temperature_edge_c"]["absent_reason"], g["temperature_edge_c"]
    # MI300: the metrics table has residency counters, not the throttle bits: absent with the reason.
    assert "residencies" in g["amd_throttle_status"]["absent_reason"], g["amd_throttle_status"]
    assert fact(g, "bad_pages_retired") == 0 and fact(g, "bad_pages_pending") == 0
    assert len(g["xgmi_links"]) == 7 and all(l["active"]["value"] for l in g["xgmi_links"]), g["xgmi_links"]
    blocks = {b["block"]: b for b in g["ras_blocks"]}
    assert "UMC" in blocks and blocks["UMC"]["uncorrectable"]["value"] == 0, blocks
    # NVIDIA-only facts are not listed for an AMD GPU.
    assert "mig_enabled" not in g and "sm_count" not in g and "compute_capability" not in g
    assert doc["topology"]["matrix"][0][1] == "XGMI", doc["topology"]
    code, out, _ = run("inventory", "--no-color", env=amd_env("amd_mi300x_healthy"))
    assert code == 0
    assert "AMD driver" in out and "amdgpu driver version" in out and "6.8.5" in out, out
    assert "7 of 7 links active" in out and "gfx942" in out and "Junction (hotspot) temperature" in out, out
    assert "XGMI = an xGMI link" in out, out


@slow
def test_check_8x_mi300x_passes_every_kernel_free_check():
    code, doc, v, c = check(amd_env("amd_mi300x_healthy"))
    for key in ("gpu.identity", "gpu.tenancy", "gpu.health", "gpu.pcie_link", "gpu.nvlink"):
        assert set(v[key].values()) == {"PASS"}, (key, v[key], [x["summary"] for x in c[key].values()])
    assert v["gpu.driver"][None] == "PASS", c["gpu.driver"]
    assert "AMD amdgpu driver loaded, version 6.8.5" in c["gpu.driver"][None]["summary"]
    assert v["order.gpu_count"][None] == "PASS" and v["order.gpu_model"][None] == "PASS", v
    assert v["order.gpu_memory"][None] == "PASS", c["order.gpu_memory"]
    assert all(g["sku"] == "mi300x" and g["vendor"] == "AMD" for g in doc["gpus"]), doc["gpus"]
    assert doc["machine"]["driver"]["amd"]["present"] is True
    assert code in (0, 1) and "\x1b[" not in json.dumps(doc)
    # Checks that need NVIDIA's CUDA say why they are not judged on AMD; the kernel measurements and
    # the GEMM (hipBLASLt) take the HIP path (tests/e2e/test_amd_measure.py, test_amd_gemm.py) and,
    # without HIP, say how to get it.
    code, doc, v, c = check(amd_env("amd_mi300x_healthy"), "", "gpu.gemm,gpu.p2p,gpu.memory_bandwidth,gpu.fp_peak")
    for r in c["gpu.p2p"].values():
        assert r["verdict"] == "SKIP" and "not judged on AMD" in r["summary"], r
    for key in ("gpu.memory_bandwidth", "gpu.fp_peak", "gpu.gemm"):
        for r in c[key].values():
            assert r["verdict"] == "SKIP" and "install ROCm's HIP runtime" in r["summary"], r


@slow
def test_partitioned_box_sold_as_whole_gpus():
    code, doc, v, c = check(amd_env("amd_mi300x_cpx_nps4"))
    assert code == 1
    assert len(doc["gpus"]) == 64
    ten = c["gpu.tenancy"][0]
    assert ten["verdict"] == "FAIL" and "partitioned CPX/NPS4" in ten["summary"], ten
    assert "amd-smi set --compute-partition SPX" in ten["summary"], ten
    assert v["order.gpu_count"][None] == "FAIL"
    # Each partition is still an MI300X: identity passes and says whose share it holds.
    idn = c["gpu.identity"][5]
    assert idn["verdict"] == "PASS" and "CPX partition" in idn["summary"], idn
    # Ordered as partitions: the slicing is what was bought.
    code, doc, v, c = check(amd_env("amd_mi300x_cpx_nps4"), "64x MI300X, cpx")
    assert set(v["gpu.tenancy"].values()) == {"WARN"}, v["gpu.tenancy"]
    assert v["order.mig"][None] == "PASS", c["order.mig"]


@slow
def test_xgmi_link_down():
    code, doc, v, c = check(amd_env("amd_mi300x_xgmi_down"))
    assert code == 1
    fails = sorted(g for g, x in v["gpu.nvlink"].items() if x == "FAIL")
    assert fails == [3, 5], v["gpu.nvlink"]
    assert "did not train" in c["gpu.nvlink"][3]["summary"], c["gpu.nvlink"][3]
    code, inv, _ = run_json("inventory", env=amd_env("amd_mi300x_xgmi_down"))
    assert inv["topology"]["matrix"][3][5] == "XDOWN" and inv["topology"]["matrix"][5][3] == "XDOWN"


@slow
def test_ras_errors_and_bad_pages():
    code, doc, v, c = check(amd_env("amd_mi300x_ras_errors"))
    assert code == 1
    assert [g for g, x in v["gpu.health"].items() if x == "FAIL"] == [2], v["gpu.health"]
    r = c["gpu.health"][2]
    texts = " ".join(f["text"] for f in r["findings"])
    assert "1 uncorrectable error(s) in UMC (HBM memory)" in texts, texts
    assert "1 bad page(s) waiting to be retired" in texts and "3 page(s) of HBM retired" in texts, texts
    assert any("12 corrected error(s) in UMC" in d for d in r["details"]), r["details"]


@slow
def test_hot_and_throttling_gpus():
    # MI300: hot before any load is a WARN (junction within 10 C of its critical 105 C).
    code, doc, v, c = check(amd_env("amd_mi300x_throttling"))
    assert v["gpu.health"][6] == "WARN", c["gpu.health"][6]
    assert "104 C before any load" in c["gpu.health"][6]["summary"]
    # MI210: the metrics table's throttle bits say TEMP_HOTSPOT before any load: FAIL.
    code, doc, v, c = check(amd_env("amd_mi210_hot"), "2x MI210")
    assert v["gpu.health"][1] == "FAIL" and v["gpu.health"][0] == "PASS", v["gpu.health"]
    assert "TEMP_HOTSPOT" in c["gpu.health"][1]["summary"], c["gpu.health"][1]
    code, inv, _ = run_json("inventory", env=amd_env("amd_mi210_hot"))
    assert inv["gpus"][1]["amd_throttle_status"]["decoded"] == ["TEMP_HOTSPOT"], inv["gpus"][1]["amd_throttle_status"]


@slow
def test_rebadged_and_other_skus():
    code, doc, v, c = check(amd_env("amd_mi300x_rebadged"))
    assert code == 1
    r = c["gpu.identity"][0]
    assert r["verdict"] == "FAIL" and "80 compute units where an Instinct MI300X has 304" in r["summary"], r
    code, doc, v, c = check(amd_env("amd_mi308x_rebadged"))
    assert code == 1
    assert v["order.gpu_model"][None] == "FAIL", c["order.gpu_model"]
    assert "'MI308X' (not in the spec database)" in c["order.gpu_model"][None]["summary"], c["order.gpu_model"]


@slow
def test_old_rocm_without_amd_smi():
    env = amd_env(None, rocm="rocm_mi250x_rocm57")
    code, inv, err = run_json("inventory", env=env)
    assert code == 0, err
    assert inv["driver"]["amd"]["library"] == "ROCm SMI" and inv["driver"]["amd"]["library_version"]["value"] == "5.0.0"
    assert len(inv["gpus"]) == 8
    g = inv["gpus"][0]
    assert fact(g, "name") == "AMD Instinct MI250X" and fact(g, "memory_total_bytes") == 68702699520
    assert fact(g, "pcie_gen_current") == 4 and fact(g, "power_limit_w") == 560
    assert "AMD SMI" in g["gfx_target"]["absent_reason"], g["gfx_target"]
    # Four boards of two dies, listed as eight GPUs.
    code, doc, v, c = check(env, "4x MI250X")
    assert v["order.gpu_count"][None] == "PASS", c["order.gpu_count"]
    assert set(v["gpu.identity"].values()) == {"PASS"}, c["gpu.identity"][0]
    assert set(v["gpu.health"].values()) == {"PASS"}, c["gpu.health"][0]
    # ROCm SMI names the links' type, not their state: said, not guessed.
    assert set(v["gpu.nvlink"].values()) == {"WARN"}, c["gpu.nvlink"][0]
    assert "state unread" in c["gpu.nvlink"][0]["summary"]


def test_no_rocm_and_no_nvidia():
    code, doc, err = run_json("inventory", env=NO_DRIVER)
    assert code == 0
    amd = doc["driver"]["amd"]
    assert amd["present"] is False
    # AMD SMI first, then ROCm SMI as the fallback: both reasons.
    assert "libamd_smi.so could not be loaded" in amd["absent_reason"], amd
    assert "librocm_smi64.so could not be loaded" in amd["absent_reason"], amd


@slow
def test_box_with_both_vendors():
    env = amd_env("amd_2x_mi210", nvidia="healthy_2x_h100_pcie")
    code, inv, err = run_json("inventory", env=env)
    assert code == 0, err
    assert [g["vendor"] for g in inv["gpus"]] == ["NVIDIA", "NVIDIA", "AMD", "AMD"], [g.get("vendor") for g in inv["gpus"]]
    assert [g["index"] for g in inv["gpus"]] == [0, 1, 2, 3]
    assert fact(inv["gpus"][0], "name").startswith("NVIDIA") and fact(inv["gpus"][2], "name") == "AMD Instinct MI210"
    assert inv["driver"]["nvml_present"] is True and inv["driver"]["amd"]["present"] is True
    # CUDA sees the NVIDIA GPUs only, and no problem is made of the AMD ones it cannot see.
    assert fact(inv["gpus"][1], "cuda_ordinal") == 1, inv["gpus"][1].get("cuda_ordinal")
    assert "cuda_ordinal" not in inv["gpus"][2] or fact(inv["gpus"][2], "cuda_ordinal") is None, inv["gpus"][2]
    code, doc, v, c = check(env, "")
    assert not doc["machine"]["driver"]["problems"], doc["machine"]["driver"]["problems"]
    assert set(v["gpu.identity"].values()) == {"PASS"}, {g: x["summary"] for g, x in c["gpu.identity"].items()}
    assert [g["sku"] for g in doc["gpus"]] == ["h100-pcie-80gb"] * 2 + ["mi210"] * 2, doc["gpus"]
    drv = c["gpu.driver"][None]["summary"]
    assert "NVIDIA driver loaded" in drv and "AMD amdgpu driver loaded" in drv, drv
    code, out, _ = run("check", "--quick", "--only", "gpu.driver", "--no-color", env=env)
    assert re.search(r"Driver\s+NVIDIA driver \S+.* · AMD amdgpu driver", out), out
    # The kernel measurements take CUDA's path on a box with NVIDIA GPUs: the AMD GPUs are named, not
    # handed to CUDA.
    code, doc, err = run_json("bench", "memory", "--quick", "--gpus", "2,3", env=env)
    rs = {x["gpu"]: x for x in doc["checks"] if x["key"] == "gpu.memory_bandwidth"}
    assert sorted(rs) == [2, 3], rs
    for r in rs.values():
        assert r["verdict"] == "SKIP" and "an AMD GPU: CUDA runs on NVIDIA GPUs only" in r["summary"], r


def test_top_once_on_amd():
    code, out, err = run("top", "--once", "--json", env=amd_env("amd_mi300x_throttling"))
    assert code == 0, err
    doc = json.loads(out)
    text = json.dumps(doc)
    assert "AMD Instinct MI300X" in text, text[:500]


SERIES = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def series(page, name, **want):
    out = []
    for line in page.splitlines():
        m = SERIES.match(line)
        if not m or line.startswith("#") or m.group(1) != name:
            continue
        labels = dict(LABEL.findall(m.group(2) or ""))
        if all(labels.get(k) == v for k, v in want.items()):
            out.append((labels, float(m.group(3))))
    return out


def scrape_export(env, want, timeout_s=30):
    """Starts gpuvet export on a free loopback port, returns the first /metrics page holding `want`."""
    import socket
    import subprocess
    import time
    import urllib.request
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    e = dict(os.environ)
    e.update(env)
    args = ["export", "--listen", f"127.0.0.1:{port}", "--interval", "0.2"]
    proc = subprocess.Popen([harness.GPUVET, *args], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    page, deadline = "", time.monotonic() + timeout_s
    try:
        while want not in page and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    page = r.read().decode()
            except OSError:
                pass
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        harness.check_no_crash(args, proc.returncode, err)
    assert want in page, page[:3000]
    return page


@slow
def test_export_uses_amd_exporter_names():
    page = scrape_export(amd_env("amd_mi300x_ras_errors"), "gpu_junction_temperature")
    assert "DCGM_FI_DEV_GPU_TEMP" not in page, page[:2000]
    (labels, value), = series(page, "gpu_junction_temperature", gpu_id="0")
    assert value == 42 and labels["card_model"] == "AMD Instinct MI300X", labels
    assert labels["gpu_compute_partition_type"] == "SPX" and labels["gpu_memory_partition_type"] == "NPS1", labels
    assert labels["driver_version"] == "6.8.5", labels
    (_, total), = series(page, "gpu_total_vram", gpu_id="0")
    assert total == 206141652992 / 2**20
    (_, umc), = series(page, "gpu_ecc_uncorrect_umc", gpu_id="2")
    assert umc == 1
    (_, clk), = series(page, "gpu_clock", gpu_id="0", clock_type="system")
    assert clk == 132
    (_, cap), = series(page, "gpuvet_power_default_limit_watts", gpu_id="0")
    assert cap == 750


@slow
def test_run_on_amd_samples_and_says_what_is_not_judged():
    with tempfile.TemporaryDirectory() as d:
        code, out, err = run("run", "--interval", "0.2", "--report", d, "--", "sleep", "1.5",
                             env=amd_env("amd_mi300x_healthy"), timeout=120)
        assert code == 0, err
        doc = json.load(open(os.path.join(d, "gpuvet-run.json")))
    text = json.dumps(doc)
    assert "AMD Instinct MI300X" in text
    not_judged = doc["run"]["diagnosis"]["not_judged"]
    assert any("on AMD GPUs" in n and "GPM" in n for n in not_judged), not_judged


def test_specs_compare_across_vendors():
    code, doc, err = run_json("specs", "compare", "h100-sxm5-80gb", "mi300x", "mi250x")
    assert code == 0, err
    h100, mi300x, mi250x = doc["gpus"]
    assert [g["vendor"] for g in doc["gpus"]] == ["NVIDIA", "AMD", "AMD"]
    assert mi300x["gfx_target"] == "gfx942" and mi250x["gfx_target"] == "gfx90a" and h100["compute_capability"] == "9.0"
    assert mi250x["devices_per_board"] == 2 and mi300x["xgmi_links"] == 7
    # Ratios across vendors where both publish the figure (AMD's data sheet: 5.3 TB/s; NVIDIA's: 3.35 TB/s).
    assert abs(doc["ratios_to_first"]["memory_bandwidth_gbps"][1] - 5300 / 3350) < 1e-9
    # SMs and compute units are not the same unit: no ratio between them.
    assert doc["ratios_to_first"]["sm_count"][1] is None
    code, out, _ = run("specs", "compare", "h100-sxm5-80gb", "mi300x", "--no-color")
    assert code == 0
    assert re.search(r"^Vendor +NVIDIA +AMD", out, re.M) and "CDNA 3 (gfx942)" in out, out
    assert re.search(r"^xGMI links +— +7", out, re.M), out


def fake_python(result):
    """A shell script standing in for python that prints the software probe's result line."""
    d = tempfile.mkdtemp(prefix="gpuvet-e2e-amd-")
    path = os.path.join(d, "python")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho 'GPUVET_RESULT " + json.dumps(result) + "'\n")
    os.chmod(path, 0o700)
    return path


def rocm_path(version):
    """A ROCm install that holds only its version file ($ROCM_PATH/.info/version)."""
    d = tempfile.mkdtemp(prefix="gpuvet-e2e-rocm-")
    os.makedirs(os.path.join(d, ".info"))
    with open(os.path.join(d, ".info", "version"), "w") as f:
        f.write(version + "\n")
    return d


ROCM_WHEEL = {"python": "3.12.1", "executable": "/x/python", "torch": "2.5.1+rocm6.2", "torch_cuda": None,
              "torch_hip": "6.2.41133-dd7f95766", "cuda_available": True, "device_count": 8,
              "arch_list": ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]}


def software(result, rocm="6.2.4-1"):
    env = dict(amd_env("amd_mi300x_healthy"), ROCM_PATH=rocm_path(rocm))
    code, doc, err = run_json("check", "--only", "gpu.software", "--python", fake_python(result), env=env)
    [r] = [c for c in doc["checks"] if c["key"] == "gpu.software"]
    return r, " ".join(f["text"] for f in r["findings"])


def test_software_on_amd_rocm_wheel_driver_and_gfx_targets():
    # The amdgpu module of the scenario (6.8.5) is ROCm 6.2's: a ROCm 6.2 wheel with gfx942 fits.
    r, text = software(ROCM_WHEEL)
    assert r["verdict"] == "PASS", (r["summary"], text)
    assert "can use all 8 GPU(s)" in r["summary"], r["summary"]
    # A wheel without gfx942 kernels cannot run on an MI300X.
    r, text = software(dict(ROCM_WHEEL, arch_list=["gfx90a", "gfx1100"]))
    assert r["verdict"] == "FAIL" and "no kernels for gfx942" in text, (r["summary"], text)
    # A CUDA wheel on an AMD box: the fix names a ROCm wheel for the driver's release.
    r, text = software(dict(ROCM_WHEEL, torch="2.5.1+cu124", torch_cuda="12.4", torch_hip=None,
                            arch_list=["sm_80", "sm_90"]))
    assert r["verdict"] == "FAIL" and "is a CUDA build: it cannot use AMD GPUs" in r["summary"], r["summary"]
    assert "download.pytorch.org/whl/rocm6.2" in r["summary"], r["summary"]
    # The server's ROCm 5.7 user space on a ROCm 6.2 kernel driver is outside AMD's support matrix.
    r, text = software(ROCM_WHEEL, rocm="5.7.1")
    assert r["verdict"] == "FAIL" and "The ROCm user space is ROCm 5.7" in text and "outside" in text, text
    # PyTorch that cannot see the GPUs AMD SMI lists.
    r, text = software(dict(ROCM_WHEEL, cuda_available=False, device_count=0))
    assert r["verdict"] == "FAIL" and "/dev/kfd" in text, (r["summary"], text)


def test_bench_train_on_amd_runs_pytorchs_rocm_build_on_the_amd_gpus():
    # A fake interpreter: the software probe answers a ROCm wheel; the benchmark records its arguments
    # and answers what a ROCm build's run would (torch.version.hip set, torch.version.cuda None).
    d = tempfile.mkdtemp(prefix="gpuvet-e2e-amd-train-")
    args = os.path.join(d, "args")
    single = {"throughput": 2400.0, "elapsed_s": 12.5, "batch": 256, "oom_batches": [], "unit": "images/s",
              "precision": "amp-bf16", "flops_per_unit": None}
    ok = {"status": "ok", "model": "resnet50", "device": "cuda", "warmup": 20, "steps": 100, "single": single,
          "torch": "2.5.1+rocm6.2", "cuda": None, "hip": "6.2.41133-dd7f95766", "cudnn": None, "python": "3.12.1"}
    path = os.path.join(d, "python")
    with open(path, "w") as f:
        f.write("#!/bin/sh\ncase \"$3\" in\n"
                "*software_probe.py) echo 'GPUVET_RESULT " + json.dumps(ROCM_WHEEL) + "' ;;\n"
                "*) echo \"$@\" > " + args + "; echo 'GPUVET_RESULT " + json.dumps(ok) + "' ;;\nesac\n")
    os.chmod(path, 0o700)
    env = dict(amd_env("amd_mi300x_healthy"), ROCM_PATH=rocm_path("6.2.4"))
    code, doc, err = run_json("bench", "train", "resnet50", "--python", path, env=env)
    [tr] = [c for c in doc["checks"] if c["key"] == "gpu.train"]
    # It ran (gpuvet's CUDA is not needed on AMD GPUs), on PyTorch's "cuda" devices, all eight; with no
    # published MI300X baseline in gpuvet the figure is shown, not judged.
    assert [m["value"] for m in tr["measurements"] if m["key"] == "images_per_s"] == [2400.0], tr
    assert tr["verdict"] == "SKIP" and "no baseline for this GPU (mi300x" in tr["summary"], tr
    with open(args) as f:
        argv = f.read().split()
    assert argv[argv.index("--device") + 1] == "cuda" and argv[argv.index("--devices") + 1] == "0,1,2,3,4,5,6,7", argv
    text = json.dumps(tr)
    assert "ROCm 6.2.41133" in text and "CUDA" not in text, tr
    # A wheel without CUDA or ROCm on an AMD box: the fix is a ROCm wheel.
    err_result = {"status": "error", "error_kind": "no_cuda_build",
                  "message": "this PyTorch 2.5.1+cpu was built without CUDA or ROCm (a CPU-only wheel)"}
    with open(path, "w") as f:
        f.write("#!/bin/sh\ncase \"$3\" in\n"
                "*software_probe.py) echo 'GPUVET_RESULT " + json.dumps(ROCM_WHEEL) + "' ;;\n"
                "*) echo 'GPUVET_RESULT " + json.dumps(err_result) + "' ;;\nesac\n")
    code, doc, err = run_json("bench", "train", "resnet50", "--python", path, env=env)
    [tr] = [c for c in doc["checks"] if c["key"] == "gpu.train"]
    assert tr["verdict"] == "FAIL" and "the wheel has no ROCm" in tr["summary"], tr
    assert "download.pytorch.org/whl/rocm" in tr["summary"], tr["summary"]


main(globals())
