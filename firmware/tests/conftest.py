import pytest

# test_mpy_* modules measure MicroPython's heap (micropython.heap_lock): they
# run only under engine_core/tests/mp_runner.py.
collect_ignore_glob = ["test_mpy_*"]


@pytest.fixture(autouse=True)
def _own_working_folder(tmp_path, monkeypatch):
    """Each test keeps the board's files it writes (service.log,
    counters.json, ...) in a working folder of its own, as MicroPython's
    runner keeps them in build/mpy: two test files that run at once
    (`pytest -n`) never share one."""
    monkeypatch.chdir(tmp_path)
