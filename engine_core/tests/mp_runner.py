"""A tiny test runner for MicroPython (pytest does not run there).

    cd build/mpy && micropython -m engine_core.tests.mp_runner

Runs every `test_*` function of every tests module except the CPython-only
ones (`test_cpy_*`: hypothesis, the reference model), prints one line per
failure and the closing line `N passed, N failed`, and exits 1 on a failure.
"""

import os
import sys

HERE = "engine_core/tests"


def modules():
    names = []
    for f in os.listdir(HERE):
        if f.startswith("test_") and not f.startswith("test_cpy_"):
            for ext in (".py", ".mpy"):
                if f.endswith(ext):
                    names.append(f[:-len(ext)])
    names.sort()
    return names


def main():
    passed = failed = 0
    for name in modules():
        mod = __import__("engine_core.tests." + name, None, None, [name])
        for attr in sorted(dir(mod)):
            fn = getattr(mod, attr)
            if not attr.startswith("test_") or not callable(fn):
                continue
            try:
                fn()
                passed += 1
            except Exception as e:  # report every failure, then go on
                failed += 1
                print("FAIL %s.%s: %s %s" % (name, attr, type(e).__name__, e))
                sys.print_exception(e)
    print("micropython: %d passed, %d failed" % (passed, failed))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
