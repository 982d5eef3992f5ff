"""Lists the test functions of end-to-end modules for CMake, one line each: <module path> <function> <tier>.

A test is a module-level `def test_*` (what harness.main runs); its tier is `slow` when it is decorated
with @slow (harness.slow), else `fast`. Modules are parsed, not imported: importing runs module code
(test_plan.py runs its tests on import), and configuring must not run tests.
"""
import ast
import sys


def is_slow_mark(decorator):
    return (isinstance(decorator, ast.Name) and decorator.id == "slow") or \
           (isinstance(decorator, ast.Attribute) and decorator.attr == "slow")


def tests_of(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    seen = set()
    main_line = None
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                getattr(node.value.func, "id", None) == "main":
            main_line = node.lineno
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        if node.name in seen:  # Python keeps the last one: the first would never run
            sys.exit(f"{path}:{node.lineno}: {node.name} is defined twice; rename one of them")
        if main_line is not None:  # main() runs at import: a test defined below it never exists there
            sys.exit(f"{path}:{node.lineno}: {node.name} is defined after main(globals()) at line {main_line}; "
                     "move it above")
        seen.add(node.name)
        yield node.name, "slow" if any(map(is_slow_mark, node.decorator_list)) else "fast"


def main(paths):
    for path in paths:
        for name, tier in tests_of(path):
            print(path, name, tier)


if __name__ == "__main__":
    main(sys.argv[1:])
