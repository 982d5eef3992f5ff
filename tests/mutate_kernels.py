#!/usr/bin/env python3
"""Mutation harness for gpuvet's kernels: applies each mutation of a list (tests/ptx/mutations.txt
for the PTX, tests/fakes/amd_kernel_mutations.txt for the AMD kernels' OpenCL C) to a copy of the
kernels' folder, runs the kernel tests on it (gpuvet_ptx_tests through the PTX interpreter, or
gpuvet_amd_kernel_tests through OpenCL on the CPU; each reads the folder from its environment
variable), and fails if any mutation survives (the tests still pass) or an entry no longer matches
the sources.

usage: mutate_kernels.py ptx|amd TESTS_BINARY KERNEL_DIR MUTATIONS_FILE [--only SUBSTRING]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# What differs between the two kinds of kernel: the folder's variable, how a function's header
# reads, and how a mutation that makes a loop endless is stopped.
KINDS = {
    # The interpreter's branch budget fails such a mutation fast: the tests' largest launch takes
    # about 60 000 branches.
    "ptx": {"dir_env": "GPUVET_PTX_DIR", "env": {"GPUVET_FAKE_PTX_BUDGET": "1000000"}, "timeout_s": 120,
            "header": lambda func: r"\.(entry|func)\b.*\b" + re.escape(func) + r"\("},
    # OpenCL on the CPU has no budget: the timeout kills it, and that counts as caught. The header
    # is the function's, not a comment naming it.
    "amd": {"dir_env": "GPUVET_AMD_KERNEL_DIR", "env": {}, "timeout_s": 90,
            "header": lambda func: r"^(?!//)\S.*\b" + re.escape(func) + r"\("},
}
KIND = KINDS["ptx"]


def norm(s):
    return re.sub(r"\s+", " ", s.strip())


def parse(path):
    out = []
    for n, line in enumerate(open(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.rstrip("\n").split(" | ")]
        if len(parts) != 5:
            sys.exit(f"{path}:{n}: expected 'file | function | line | mutated line | why', got {len(parts)} fields")
        out.append((n, *parts))
    return out


def function_lines(lines, func):
    """Indexes of the lines of function `func` (header to the closing brace at column 0)."""
    start = next((i for i, l in enumerate(lines) if re.search(KIND["header"](func), l)), None)
    if start is None:
        return []
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    return range(start, end + 1)


def apply(text, func, old, new):
    lines = text.split("\n")
    hits = [i for i in function_lines(lines, func) if norm(lines[i]) == norm(old)]
    if len(hits) != 1:
        return None, f"'{old}' occurs {len(hits)} times in {func} (must be once)"
    i = hits[0]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    if new == "(delete)":
        del lines[i]
    else:
        lines[i] = indent + new
    return "\n".join(lines), None


def run_tests(binary, kernel_dir):
    env = dict(os.environ, **KIND["env"])
    env[KIND["dir_env"]] = kernel_dir
    try:
        p = subprocess.run([binary, "--gtest_brief=1", "--gtest_fail_fast"], env=env, capture_output=True, text=True,
                           timeout=KIND["timeout_s"])
    except subprocess.TimeoutExpired:
        return False, "timed out"
    failed = [l.split("]", 1)[1].strip() for l in p.stdout.splitlines() if l.startswith("[  FAILED  ]") and "," not in l]
    return p.returncode == 0, ", ".join(sorted(set(failed)))[:200] or f"exit {p.returncode}"


def main():
    global KIND
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        k = args.index("--only")
        only = args[k + 1]
        del args[k:k + 2]
    if len(args) != 4 or args[0] not in KINDS:
        sys.exit(__doc__)
    kind, binary, src, listing = args
    KIND = KINDS[kind]
    mutations = parse(listing)
    work = tempfile.mkdtemp(prefix=f"gpuvet-mutate-{kind}-")
    try:
        ok, why = run_tests(binary, src)
        if not ok:
            print(f"the kernel tests fail on the unmutated sources ({why}): fix that first")
            return 1
        survived, stale, killed = [], [], 0
        for n, file, func, old, new, why in mutations:
            if only and only not in f"{file} {func} {old}":
                continue
            shutil.rmtree(work)
            shutil.copytree(src, work)
            path = os.path.join(work, file)
            text, err = apply(open(path).read(), func, old, new)
            if err:
                stale.append(f"line {n}: {file}: {err}")
                continue
            open(path, "w").write(text)
            passed, detail = run_tests(binary, work)
            status = "SURVIVED" if passed else "killed"
            print(f"{status:8}  {file} {func}: {why}" + ("" if passed else f"  [{detail}]"), flush=True)
            if passed:
                survived.append(f"line {n}: {file} {func}: {old} -> {new} ({why})")
            else:
                killed += 1
        print(f"\n{killed} killed, {len(survived)} survived, {len(stale)} stale")
        for s in stale:
            print("stale:    " + s)
        for s in survived:
            print("survived: " + s)
        return 1 if survived or stale else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
