"""`pytest hw_tests --qemu`'s skip list (hw_tests/conftest.py, QEMU_SKIPS)
names tests that exist, each with its reason: a renamed test must not
slip out of the list, nor a stale entry stay in it. `make test-qemu`
runs a QEMU on every core."""

import os
import re
import subprocess

from hw_tests.conftest import QEMU_SKIPS, qemu_skip
from host_tools.image.mpenv import ROOT
from host_tools.tests.board_image_helpers import _env


def test_every_entry_names_a_test_file_and_a_test_in_it():
    for prefix, reason in QEMU_SKIPS:
        path, _, name = prefix.partition("::")
        text = (ROOT / path).read_text()
        tests = re.findall(r"^def (test_\w+)", text, re.M)
        assert tests, path
        assert not name or any(t.startswith(name) for t in tests), prefix
        assert len(reason) > 20, prefix


def test_a_test_outside_the_list_runs_and_one_inside_says_why():
    assert qemu_skip("hw_tests/test_cycle.py::test_a_cycle_over_the_link") is None
    assert qemu_skip("hw_tests/test_service.py::test_no_session_a_wrong_key") is None
    assert "flow control" in qemu_skip(
        "hw_tests/test_link.py::test_a_flood_of_requests_is_answered_in_order_and_the_loop_goes_on")
    assert "Wi-Fi" in qemu_skip("hw_tests/test_telemetry.py::test_the_acl_keeps_a_table")
    assert "twin" in qemu_skip("hw_tests/test_dice.py::test_dice_faces_cover_one_to_six")
    assert qemu_skip("hw_tests/test_dice.py::test_a_non_dealer_key_is_refused") is None


def _test_qemu_line(*args):
    """make test-qemu's pytest line, the image and the tools taken as made
    (-o: nothing is built, on a fresh clone too)."""
    r = subprocess.run(["make", "-n", "-o", "build/firmware-qemu/firmware.bin", "-o", "tools",
                        "test-qemu", *args], cwd=ROOT, env=_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    return [line for line in r.stdout.splitlines() if "pytest hw_tests --qemu" in line]


def test_make_test_qemu_runs_a_qemu_on_every_core():
    cores = len(os.sched_getaffinity(0))
    assert _test_qemu_line() == [".venv/bin/python -m pytest hw_tests --qemu -n %d --dist worksteal"
                                 % cores]
    assert _test_qemu_line("JOBS=1")[0].endswith(" -n 1 --dist worksteal")
