# test_mpy_* modules measure MicroPython's heap (micropython.heap_lock): they
# run only under engine_core/tests/mp_runner.py.
collect_ignore_glob = ["test_mpy_*"]
