"""A tiny test runner for MicroPython (pytest does not run there).

    cd build/mpy && micropython -m engine_core.tests.mp_runner [DIR ...]

Each DIR is a test package directory relative to the current directory
(default: engine_core/tests), e.g. `engine_core/tests firmware/tests`.
Runs every `test_*` function of every `test_*` module there except the
CPython-only ones (`test_cpy_*`: hypothesis, the reference model), prints one
line per failure and one closing line for the whole run,
`micropython: N passed, N failed`, and exits 1 on a failure.
"""

import os
import sys

DEFAULT = "engine_core/tests"


def modules(here):
    names = []
    for f in os.listdir(here):
        if f.startswith("test_") and not f.startswith("test_cpy_"):
            for ext in (".py", ".mpy"):
                if f.endswith(ext):
                    names.append(f[:-len(ext)])
    names.sort()
    return names


def run_dir(here):
    """(passed, failed) of every test function of one test package."""
    passed = failed = 0
    package = here.strip("/").replace("/", ".")
    for name in modules(here):
        full = package + "." + name
        mod = __import__(full, None, None, [name])
        for attr in sorted(dir(mod)):
            fn = getattr(mod, attr)
            if not attr.startswith("test_") or not callable(fn):
                continue
            try:
                fn()
                passed += 1
            except Exception as e:  # report every failure, then go on
                failed += 1
                print("FAIL %s.%s: %s %s" % (full, attr, type(e).__name__, e))
                sys.print_exception(e)
    return passed, failed


def main(dirs=None):
    if not dirs:
        dirs = [DEFAULT]
    passed = failed = 0
    for here in dirs:
        p, f = run_dir(here)
        passed += p
        failed += f
    print("micropython: %d passed, %d failed" % (passed, failed))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
