"""A tiny harness for end-to-end tests: run gpuvet, collect test_* functions, print a summary.

Each test module calls main(globals()); the gpuvet binary is argv[1], test names may follow (CTest
passes one: each function is its own test, listed by list_tests.py).
"""
import json
import os
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

GPUVET = None

# What a sanitizer prints (the sanitized tree, tests/sanitize/checked): UBSan's "runtime error:" goes
# to stderr only, so a test that reads stderr and accepts a non-zero exit would otherwise swallow it.
SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|^\S+:\d+:\d+: runtime error: ", re.M)
CRASH_SIGNALS = {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE}


def check_no_crash(args, returncode, stderr):
    """Fails the test when gpuvet crashed or a sanitizer reported, whatever exit code it expects."""
    if SANITIZER_REPORT.search(stderr or ""):
        raise AssertionError(f"sanitizer report from gpuvet {' '.join(args)}:\n{stderr}")
    if returncode < 0 and -returncode in CRASH_SIGNALS:
        raise AssertionError(f"gpuvet {' '.join(args)} died of {signal.Signals(-returncode).name}:\n{stderr}")


def run(*args, env=None, input=None, timeout=240):
    """Runs gpuvet with args; returns (exit code, stdout, stderr)."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    # AMD's libraries only where a test names them: an installed ROCm SMI, HIP runtime, RCCL or hipBLASLt (Debian's
    # librocm-smi64 and libamdhip64 are test dependencies) must not change what the scenarios see.
    for var in ("GPUVET_LIBAMD_SMI", "GPUVET_LIBROCM_SMI", "GPUVET_LIBHIP", "GPUVET_RCCL", "GPUVET_HIPBLASLT"):
        e.setdefault(var, "/nonexistent/" + var.lower())
    p = subprocess.run([GPUVET, *args], capture_output=True, text=True, errors="replace", env=e, input=input, timeout=timeout)
    check_no_crash(args, p.returncode, p.stderr)
    return p.returncode, p.stdout, p.stderr


def amd_kernel_env(scenario, libs=("libfakerccl.so",), **extra):
    """The environment of a run on the AMD doubles (AMD SMI and HIP, plus `libs` among the RCCL and
    hipBLASLt doubles) with no NVIDIA driver, on scenarios/<scenario>.toml."""
    build = os.environ.get("GPUVET_BUILD_DIR", "build")
    tests = os.environ.get("GPUVET_TEST_DIR", "tests")
    fakes = os.path.join(build, "tests", "fakes")
    env = dict(NO_DRIVER)
    env.update({"GPUVET_LIBAMD_SMI": os.path.join(fakes, "libfakeamdsmi.so"),
                "GPUVET_LIBHIP": os.path.join(fakes, "libfakehip.so"),
                "GPUVET_FAKE_AMD_SCENARIO": os.path.join(tests, "fakes", "scenarios", scenario + ".toml"),
                "POCL_CACHE_DIR": os.path.join(build, "pocl-cache")})
    for lib in libs:
        env[{"libfakerccl.so": "GPUVET_RCCL", "libfakehipblaslt.so": "GPUVET_HIPBLASLT"}[lib]] = \
            os.path.join(fakes, lib)
    # In the sanitized tree: PoCL's LLVM gives its worker threads an alternate signal stack from
    # malloc, which ASan would try to unmap as its own when the thread ends (a CHECK failure, not a
    # finding); gpuvet's own threads need no alternate stack for their reports.
    if "ASAN_OPTIONS" in os.environ:
        env["ASAN_OPTIONS"] = os.environ["ASAN_OPTIONS"] + ":use_sigaltstack=0"
    env.update(extra)
    return env


def run_json(*args, env=None):
    code, out, err = run(*args, "--json", env=env)
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as ex:
        raise AssertionError(f"not JSON ({ex}); stdout was:\n{out}\nstderr:\n{err}")
    return code, doc, err


NO_DRIVER = {"GPUVET_LIBCUDA": "/nonexistent/libcuda.so.1", "GPUVET_LIBNVML": "/nonexistent/libnvidia-ml.so.1",
             "GPUVET_LIBAMD_SMI": "/nonexistent/libamd_smi.so", "GPUVET_LIBROCM_SMI": "/nonexistent/librocm_smi64.so"}


def slow(fn):
    """Marks a test of the slow tier: CTest labels it `slow` instead of `fast` (list_tests.py reads the
    mark from the source), so `make test-fast` leaves it out. It changes nothing when the test runs."""
    return fn


def real_history_files():
    """The history files of the user running the tests, which no test may write (docs/history.md)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_DATA_HOME")
    paths = [os.path.join(home, ".local", "share", "gpuvet", "history.sqlite")]
    if xdg and xdg.startswith("/"):
        paths.append(os.path.join(xdg, "gpuvet", "history.sqlite"))
    return paths


def file_state(paths):
    out = {}
    for p in paths:
        try:
            st = os.stat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            out[p] = None
    return out


def isolated_history(fn):
    """Runs one test with the history pointed at a fresh temporary folder (GPUVET_HISTORY_DB and
    XDG_DATA_HOME, inherited by every gpuvet the test starts), and fails it if the user's own
    history files changed meanwhile."""
    real = real_history_files()
    before = file_state(real)
    saved = {k: os.environ.get(k) for k in ("GPUVET_HISTORY_DB", "XDG_DATA_HOME")}
    tmp = tempfile.mkdtemp(prefix="gpuvet-history-")
    os.environ["GPUVET_HISTORY_DB"] = os.path.join(tmp, "history.sqlite")
    os.environ["XDG_DATA_HOME"] = os.path.join(tmp, "xdg")
    try:
        fn()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)
    after = file_state(real)
    if after != before:
        raise AssertionError(f"a test wrote into the user's own history: {before} -> {after}")


def main(namespace):
    """Runs the module's test_* functions, or only those named after the binary (CTest runs one each)."""
    global GPUVET
    GPUVET = sys.argv[1]
    only = sys.argv[2:] or None
    tests = [(n, f) for n, f in namespace.items() if n.startswith("test_") and callable(f)]
    unknown = sorted(set(only or ()) - {n for n, _ in tests})
    if unknown:  # a renamed test must not pass as "0 run, 0 failed"
        print(f"no test named {', '.join(unknown)} in this module: re-run cmake to list its tests again")
        sys.exit(1)
    passed = failed = 0
    for name, fn in tests:
        if only and name not in only:
            continue
        try:
            isolated_history(fn)
            passed += 1
            print(f"ok   {name}")
        except Exception:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def drain_pty(master, idle_s=None):
    """Everything a pseudo-terminal's master side yields until EOF (the child closed it), or, with
    idle_s, until nothing more arrives for that long."""
    import select
    out = b""
    while idle_s is None or select.select([master], [], [], idle_s)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the slave side is closed
            break
        if not chunk:
            break
        out += chunk
    return out


def read_pty_until(master, needle, timeout_s):
    """What a pseudo-terminal's master side yields until `needle` has appeared in it; raises
    AssertionError with what did arrive when it has not within timeout_s."""
    import select
    out = b""
    deadline = time.monotonic() + timeout_s
    while needle not in out:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([master], [], [], left)[0]:
            raise AssertionError(f"{needle!r} did not appear within {timeout_s} s: {out[-500:]!r}")
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            raise AssertionError(f"the terminal closed before {needle!r} appeared: {out[-500:]!r}")
        out += chunk
    return out


def fake_env(scenario, old=False):
    """Environment that points gpuvet at the driver test doubles with a scenario file."""
    build = os.environ["GPUVET_BUILD_DIR"]
    tests = os.environ["GPUVET_TEST_DIR"]
    suffix = "_old" if old else ""
    return {
        "GPUVET_LIBCUDA": f"{build}/tests/fakes/libfakecuda{suffix}.so",
        "GPUVET_LIBNVML": f"{build}/tests/fakes/libfakenvml{suffix}.so",
        "GPUVET_FAKE_SCENARIO": f"{tests}/fakes/scenarios/{scenario}.toml",
    }


def amd_env(scenario, nvidia=None, rocm=None):
    """Environment for the AMD SMI double with a scenario (tests/fakes/scenarios/amd_*.toml): no NVIDIA
    driver unless `nvidia` names an NVIDIA scenario too (a box with both vendors); `rocm` names a ROCm
    SMI scenario instead of AMD SMI (a stack older than AMD SMI)."""
    build = os.environ["GPUVET_BUILD_DIR"]
    tests = os.environ["GPUVET_TEST_DIR"]
    env = dict(fake_env(nvidia)) if nvidia else {k: v for k, v in NO_DRIVER.items() if "AMD" not in k and "ROCM" not in k}
    if rocm:
        env["GPUVET_LIBAMD_SMI"] = "/nonexistent/libamd_smi.so"
        env["GPUVET_LIBROCM_SMI"] = f"{build}/tests/fakes/libfakerocmsmi.so"
        env["GPUVET_FAKE_ROCM_SCENARIO"] = f"{tests}/fakes/scenarios/{rocm}.toml"
    else:
        env["GPUVET_LIBAMD_SMI"] = f"{build}/tests/fakes/libfakeamdsmi.so"
        env["GPUVET_LIBROCM_SMI"] = "/nonexistent/librocm_smi64.so"
        env["GPUVET_FAKE_AMD_SCENARIO"] = f"{tests}/fakes/scenarios/{scenario}.toml"
    return env
