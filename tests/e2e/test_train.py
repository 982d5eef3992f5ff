"""gpuvet bench train and gpu.software end to end: the embedded scripts with the real PyTorch on the
CPU (GPUVET_TRAIN_ALLOW_CPU=1, tiny shapes), and the bad situations with fake interpreters: no torch,
a CPU-only wheel, a hang, a crash, garbage, Ctrl-C. Tests named test_torch_* need PyTorch
(scripts/install-deps --test) and are left out of the sanitized pass (the Makefile's ASAN_SKIP):
the child Python is not sanitized, and importing torch there only costs time."""
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import harness
from harness import NO_DRIVER, fake_env, main, run, run_json, slow

REAL_PYTHON = sys.executable
CPU = dict(NO_DRIVER, GPUVET_TRAIN_ALLOW_CPU="1")


def results(doc, key):
    return [c for c in doc["checks"] if c["key"] == key]


def measurement(result, key):
    for m in result["measurements"]:
        if m["key"] == key:
            return m
    raise AssertionError(f"no measurement {key} in {result}")


def fake_python(body, name="python"):
    """A shell script standing in for python: `body` runs with "$@" = -u -B SCRIPT ARGS."""
    d = tempfile.mkdtemp(prefix="gpuvet-e2e-train-")
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body.replace("DIR", d) + "\n")
    os.chmod(path, stat.S_IRWXU)
    return path, d


def python_without_torch():
    """The real interpreter, with a torch package ahead on sys.path that fails to import as a missing one."""
    path, d = fake_python(f'PYTHONPATH=DIR/site exec {REAL_PYTHON} "$@"')
    os.makedirs(os.path.join(d, "site", "torch"))
    with open(os.path.join(d, "site", "torch", "__init__.py"), "w") as f:
        f.write("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    return path


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def pids_in(d):
    with open(os.path.join(d, "pids")) as f:
        return [int(p) for p in f.read().split()]


# A child that starts a grandchild and then hangs: both must be gone when gpuvet returns.
HANG = 'sleep 300 & echo $! > DIR/pids; echo $$ >> DIR/pids; echo "loading the model" >&2; sleep 300'


def require_torch():
    p = subprocess.run([REAL_PYTHON, "-c", "import torch, torchvision"], capture_output=True, text=True)
    assert p.returncode == 0, f"PyTorch is needed for this test: scripts/install-deps --test ({p.stderr.strip()[-200:]})"


@slow
def test_torch_resnet50_runs_on_the_cpu_and_is_never_judged_pass():
    require_torch()
    code, doc, err = run_json("bench", "train", "resnet50", "--python", REAL_PYTHON, env=CPU)
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "SKIP", r
    assert "no baseline: CPU run" in r["summary"], r["summary"]
    m = measurement(r, "images_per_s")
    assert m["value"] > 0 and m["unit"] == "images/s", m
    assert "3 timed synchronized steps" in " ".join(r["details"]), r["details"]
    assert code == 3, (code, err)  # nothing was judged: COULD NOT RUN, never GO


@slow
def test_torch_multi_process_path_runs_over_gloo_on_the_cpu():
    """The DDP path of the embedded script (one process per device, gradients all-reduced) with two
    CPU ranks over gloo instead of NCCL: both ranks report a throughput, so the code a multi-GPU box
    runs has run here too."""
    require_torch()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "train", "train_bench.py")
    p = subprocess.run([REAL_PYTHON, script, "--model", "resnet50", "--device", "cpu", "--tiny", "--cpu-ranks", "2"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [l for l in p.stdout.splitlines() if "RESULT" in l]
    assert lines, p.stdout[-2000:]
    doc = json.loads(lines[-1][lines[-1].index("{"):])
    ranks = doc["ddp"]
    assert [r["rank"] for r in ranks] == [0, 1], ranks
    assert all(r["throughput"] > 0 and r["elapsed_s"] > 0 for r in ranks), ranks


@slow
def test_torch_gpt_step_reports_tokens_per_second():
    require_torch()
    code, doc, err = run_json("bench", "train", "gpt", "--python", REAL_PYTHON, env=CPU)
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "SKIP" and measurement(r, "tokens_per_s")["value"] > 0, (r, err)


@slow
def test_torch_bert_runs_or_skips_without_transformers():
    require_torch()
    has = subprocess.run([REAL_PYTHON, "-c", "import transformers"], capture_output=True).returncode == 0
    code, doc, err = run_json("bench", "train", "bert-base", "--python", REAL_PYTHON, env=CPU)
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "SKIP", r
    if has:
        assert measurement(r, "sequences_per_s")["value"] > 0, r
    else:
        assert "transformers is not importable" in r["summary"], r["summary"]


@slow
def test_torch_software_probe_reads_the_real_stack():
    require_torch()
    version = subprocess.run([REAL_PYTHON, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    code, doc, err = run_json("check", "--only", "gpu.software", "--python", REAL_PYTHON,
                              env=fake_env("healthy_1x_h100_sxm_slice"))
    [r] = results(doc, "gpu.software")
    assert measurement(r, "torch_version")["text"] == version, r
    assert measurement(r, "nvml_device_count")["value"] == 1, r
    # The fake GPU is invisible to the real torch: whatever else, that is a failure of the stack.
    assert r["verdict"] == "FAIL", r
    assert any("torch.cuda.is_available() is False" in f["text"] for f in r["findings"]), r["findings"]


def test_python_without_torch_is_a_skip_with_the_reason():
    py = python_without_torch()
    code, doc, err = run_json("bench", "train", "--python", py, env=fake_env("healthy_1x_h100_sxm_slice"))
    [sw] = results(doc, "gpu.software")
    [tr] = results(doc, "gpu.train")
    assert sw["verdict"] == "SKIP" and "No module named 'torch'" in sw["summary"], sw
    assert tr["verdict"] == "SKIP" and "PyTorch is not importable" in tr["summary"], tr
    assert code == 3, code


# A fake interpreter that answers as a CPU-only wheel would, for both scripts.
CPU_WHEEL = '''case "$3" in
*software_probe.py) echo 'GPUVET_RESULT {"python": "3.12.1", "executable": "/x/python", "torch": "2.5.1+cpu", "torch_cuda": null, "cuda_available": false, "device_count": 0, "arch_list": []}' ;;
*) echo 'GPUVET_PROGRESS {"phase": "start"}'; echo 'GPUVET_RESULT {"status": "error", "error_kind": "no_cuda_build", "message": "this PyTorch 2.5.1+cpu was built without CUDA (a CPU-only wheel)"}' ;;
esac'''


def test_cpu_only_wheel_on_a_gpu_box_fails_naming_the_fix():
    py, _ = fake_python(CPU_WHEEL)
    code, doc, err = run_json("bench", "train", "--python", py, env=fake_env("healthy_1x_h100_sxm_slice"))
    [sw] = results(doc, "gpu.software")
    [tr] = results(doc, "gpu.train")
    for r in (sw, tr):
        assert r["verdict"] == "FAIL" and "the wheel has no CUDA" in r["summary"], r
        assert "pip install" in r["summary"], r["summary"]
    assert code == 1, code


# A build for CUDA 13.0 without sm_90 kernels, on a driver for CUDA 12.8 with an H100.
WRONG_BUILD = '''echo 'GPUVET_RESULT {"python": "3.12.1", "executable": "/x/python", "torch": "2.9.0+cu130", "torch_cuda": "13.0", "cudnn": 91300, "nccl": "2.27.7", "cuda_available": true, "device_count": 1, "arch_list": ["sm_75", "sm_80", "sm_86"]}' '''


def test_compatibility_rules_name_the_driver_and_the_arch_list():
    py, _ = fake_python(WRONG_BUILD)
    code, doc, err = run_json("check", "--only", "gpu.software", "--python", py,
                              env=fake_env("healthy_1x_h100_sxm_slice"))
    [r] = results(doc, "gpu.software")
    text = " ".join(f["text"] for f in r["findings"])
    assert r["verdict"] == "FAIL", r
    assert "built for CUDA 13.0, the driver supports CUDA 12.8" in text, text
    assert "no kernels for compute capability 9.0" in text and "lists sm_90" in text, text
    assert measurement(r, "cudnn_version")["text"] == "9.13.0", r


def test_inventory_lists_the_software_stack():
    py, _ = fake_python(WRONG_BUILD)
    code, doc, err = run_json("inventory", "--python", py, env=fake_env("healthy_1x_h100_sxm_slice"))
    sw = doc["software"]
    assert sw["versions"]["PyTorch"] == "2.9.0+cu130" and sw["verdict"] == "FAIL", sw
    code, out, err = run("inventory", "--no-color", "--python", py, env=fake_env("healthy_1x_h100_sxm_slice"))
    assert code == 0 and "Software" in out and "PyTorch built for CUDA         13.0" in out, out


def test_inventory_reads_the_software_stack_only_when_asked():
    py, d = fake_python("touch DIR/ran\n" + WRONG_BUILD)
    os.symlink(py, os.path.join(d, "python3"))
    # A plain inventory never starts the framework's interpreter: the probe takes seconds.
    env = dict(fake_env("healthy_1x_h100_sxm_slice"), PATH=d + os.pathsep + os.environ["PATH"], VIRTUAL_ENV="",
               CONDA_PREFIX="")
    code, doc, err = run_json("inventory", env=env)
    assert code == 0, err
    assert doc["software"]["versions"] == {} and "--software" in doc["software"]["absent_reason"], doc["software"]
    assert not os.path.exists(os.path.join(d, "ran")), "inventory started the interpreter without --software"
    code, doc, err = run_json("inventory", "--software", env=env)
    assert code == 0 and doc["software"]["versions"]["PyTorch"] == "2.9.0+cu130", doc["software"]
    assert os.path.exists(os.path.join(d, "ran"))


def test_hung_child_is_killed_with_its_process_group():
    py, d = fake_python(HANG)
    t = time.monotonic()
    code, doc, err = run_json("bench", "train", "--python", py, env=dict(CPU, GPUVET_TRAIN_WATCHDOG_S="2"))
    took = time.monotonic() - t
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "ERROR", r
    assert "hung: no progress for 2 s" in r["summary"] and "loading the model" in r["summary"], r["summary"]
    assert took < 20, took
    assert not any(alive(p) for p in pids_in(d)), "a child or grandchild outlived gpuvet"


def test_crashing_child_is_an_error_with_its_last_stderr_lines():
    py, _ = fake_python('echo "Traceback (most recent call last):" >&2; echo "RuntimeError: CUDA error: an illegal memory access" >&2; exit 1')
    code, doc, err = run_json("bench", "train", "--python", py, env=CPU)
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "ERROR", r
    assert "exit status 1" in r["summary"] and "illegal memory access" in r["summary"], r["summary"]


def test_garbage_result_is_an_error_not_a_number():
    py, _ = fake_python('echo "GPUVET_RESULT {images: lots"; echo "GPUVET_RESULT" ; exit 0')
    code, doc, err = run_json("bench", "train", "--python", py, env=CPU)
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "ERROR" and "not JSON" in r["summary"], r
    assert not r["measurements"], r


def test_failed_multi_gpu_run_is_a_failure_naming_nccl():
    py, _ = fake_python('''echo 'GPUVET_RESULT {"status": "error", "error_kind": "nccl", "message": "the multi-GPU run over NCCL failed: rank 1 (GPU 1): DistBackendError: NCCL error"}' ''')
    code, doc, err = run_json("bench", "train", "--python", py, env=CPU)
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "FAIL" and "NCCL" in r["summary"], r


def test_ctrl_c_ends_the_child_and_its_group():
    py, d = fake_python(HANG)
    e = dict(os.environ)
    e.update(CPU)
    p = subprocess.Popen([harness.GPUVET, "bench", "train", "--python", py, "--json"], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (os.path.exists(os.path.join(d, "pids")) and len(pids_in(d)) == 2):
        time.sleep(0.1)
    pids = pids_in(d)
    assert all(alive(x) for x in pids), pids
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    harness.check_no_crash(["bench", "train"], p.returncode, err)
    assert p.returncode == 3, (p.returncode, err)
    assert '"interrupted": true' in out, out[-500:]
    time.sleep(0.2)
    assert not any(alive(x) for x in pids), "a child or grandchild outlived gpuvet"


def test_bad_bench_train_input_is_exit_2():
    for args, word in [(["bench", "train", "resnet101"], "unknown model"),
                       (["bench", "train", "--python", "/nonexistent/python"], "not an executable"),
                       (["bench", "train", "--steps", "0"], "--steps"),
                       (["bench", "memory", "resnet50"], "belong to 'bench train'")]:
        code, out, err = run(*args, env=NO_DRIVER)
        assert code == 2 and word in err, (args, code, err)


def test_training_benchmark_waits_for_full_in_check():
    code, doc, err = run_json("check", "--only", "gpu.train,gpu.software", env=fake_env("healthy_1x_h100_sxm_slice"))
    [r] = results(doc, "gpu.train")
    assert r["verdict"] == "SKIP" and "check --full" in r["summary"], r


if __name__ == "__main__":
    main(globals())
