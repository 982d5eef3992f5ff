#!/usr/bin/env python3
"""Mutation harness for gpuvet's AMD kernels: applies each mutation of amd_kernel_mutations.txt to a
copy of src/gpu/amd_kernels, runs the kernel tests (gpuvet_amd_kernel_tests, which read
$GPUVET_AMD_KERNEL_DIR) on it through OpenCL on the CPU, and fails if any mutation survives (the
tests still pass) or an entry no longer matches the sources.

usage: mutate_amd_kernels.py TESTS_BINARY KERNEL_DIR MUTATIONS_FILE [--only SUBSTRING]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_S = 90  # a mutation that makes a loop endless is killed: it counts as caught


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
    """Indexes of the lines of function `func`: its header (not a comment naming it) to the closing
    brace at column 0."""
    start = next((i for i, l in enumerate(lines) if re.match(r"^(?!//)\S.*\b" + re.escape(func) + r"\(", l)), None)
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
    env = dict(os.environ, GPUVET_AMD_KERNEL_DIR=kernel_dir)
    try:
        p = subprocess.run([binary, "--gtest_brief=1", "--gtest_fail_fast"], env=env, capture_output=True, text=True,
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    failed = [l.split("]", 1)[1].strip() for l in p.stdout.splitlines() if l.startswith("[  FAILED  ]") and "," not in l]
    return p.returncode == 0, ", ".join(sorted(set(failed)))[:200] or f"exit {p.returncode}"


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        k = args.index("--only")
        only = args[k + 1]
        del args[k:k + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    binary, src, listing = args
    mutations = parse(listing)
    work = tempfile.mkdtemp(prefix="gpuvet-amd-mutate-")
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
