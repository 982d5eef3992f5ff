#!/usr/bin/env python3
"""The layer rules of docs/architecture.md, checked over the includes of src/: every
`#include "folder/..."` of a file in one folder must name a folder that folder may include.
A report/ file that includes monitor/ fails here, not in a review.

Usage: check_layers.py SRC_DIR   (exit 1 with one line per violation)
"""
import os
import re
import sys

# What each folder may include besides itself (docs/architecture.md, "Layers").
MAY_INCLUDE = {
    "core": set(),
    "specs": {"core"},
    "gpu": {"core", "specs"},
    "host": {"core", "specs"},
    "order": {"core", "specs"},
    "plan": {"core", "specs"},
    "train": {"core", "specs"},
    "history": {"core"},
    "fleet": {"core"},
    "compare": {"core", "specs", "plan"},
    "checks": {"core", "specs", "gpu", "host", "order", "plan", "train", "history"},
    "monitor": {"core", "specs", "gpu", "host", "checks"},
    # of history/, only the rows the printers show (the store and its schema stay below cli/)
    "report": {"core", "specs", "plan", "compare", "history/queries.hpp", "history/diff.hpp",
               "history/box_history.hpp"},
    "cli": None,  # the composition root: everything
}
# Single files a folder may include from a folder it otherwise may not ({"report/x.hpp": {"monitor/y.hpp"}}),
# each with its reason: a debt docs/architecture.md names. None today.
EXCEPTIONS = {}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def violations(src):
    out = []
    for folder in sorted(os.listdir(src)):
        base = os.path.join(src, folder)
        if not os.path.isdir(base):
            continue
        if folder not in MAY_INCLUDE:
            out.append(f"src/{folder}/: a folder the layer rules do not name; add it to "
                       f"docs/architecture.md and tests/layers/check_layers.py")
            continue
        allowed = MAY_INCLUDE[folder]
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    target, rest = m.group(1), m.group(2)
                    if allowed is None or target == folder or target in allowed or f"{target}/{rest}" in allowed:
                        continue
                    if not os.path.isdir(os.path.join(src, target)):
                        continue  # a system or library header that happens to have a slash
                    if f"{target}/{rest}" in EXCEPTIONS.get(rel, ()):
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    out.append(f"src/{rel}:{line}: {folder}/ includes {target}/{rest}; {folder}/ may include "
                               f"{', '.join(sorted(allowed)) or 'nothing of gpuvet'} (docs/architecture.md)")
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    bad = violations(src)
    for line in bad:
        print(line)
    print(f"{len(bad)} include(s) against the layer rules")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
