"""The twin: the firmware frozen into the unix port built 32-bit, as a board
ships it, is what the virtual table runs; the documented commands as typed."""

import json
import os
import subprocess

from host_tools.link.client import LinkClient
from host_tools.image.mpenv import ROOT
from host_tools.sim.launcher import SimTable

MJCTL = os.path.join(ROOT, ".venv", "bin", "mjctl")
SHIPPED = {"bits": 32, "frozen": True, "micropython": "1.28.0", "port": "unix", "chip": None,
           "entropy": "seeded"}


def mjctl(*args):
    p = subprocess.run([MJCTL] + list(args), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


def test_a_cycle_and_a_hand_run_frozen_in_the_48_kb_budget():
    rc, cycle = mjctl("--sim", "--heap", "49152", "cycle", "--json")
    assert rc == 0 and cycle["ok"], cycle
    assert cycle["runtime"] == SHIPPED
    rc, hand = mjctl("--sim", "--seed", "4", "--heap", "49152", "hand", "--json")
    assert rc == 0 and hand["ok"] and hand["result"] is not None, hand
    assert hand["runtime"] == SHIPPED


def test_a_heap_too_small_for_the_boot_fails_with_the_memory_error_shown():
    rc, out = mjctl("--sim", "--heap", "16384", "cycle", "--json")
    assert rc == 1 and out["ok"] is False
    assert "MemoryError" in out["firmware_log"], out


def test_the_development_forms_say_they_are_not_frozen():
    for form in ("mpy", "source"):
        rc, st = mjctl("--sim", "--form", form, "status", "--json")
        assert rc == 0, st
        assert st["runtime"] == dict(SHIPPED, frozen=False) and st["build"] == "dev", (form, st)


def test_a_table_started_then_entered_runs_one_firmware_and_stops_it():
    sim = SimTable(seed=1).start()
    first = sim.proc
    with sim as same:                          # start(), then `with`: a common habit
        assert same is sim
        with LinkClient(sim.link_path) as link:
            assert link.hello()["proto"] > 0
        assert sim.proc is first and sim.server.hellos == 1 and sim.restarts == 0
    assert first.poll() is not None            # stop() ended the one process there was


def test_a_file_in_the_flash_cannot_stand_in_for_a_frozen_module():
    """The twin runs in the folder that stands for the board's flash: a
    module put there under a firmware name is never imported."""
    sim = SimTable(seed=1)
    for rel in ("firmware/__init__.py", "firmware/sim_main.py", "firmware/link/server.py",
                "firmware/image_build.py", "engine_core/tiles.py"):
        path = os.path.join(sim.store, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("print('SHADOWED')\nBUILD = 'forged'\nraise SystemExit(7)\n")
    with sim:
        with LinkClient(sim.link_path) as link:
            info = link.hello()
            assert info["build"].startswith("image-") and info["runtime"] == SHIPPED
            assert link.request("start")["state"] == "building"
        assert "SHADOWED" not in sim.firmware_log()


def test_make_image_is_up_to_date_after_the_build():
    """`make -q` answers 0 when nothing needs doing: no input changed since
    `make test` built the twin, so it is not rebuilt."""
    p = subprocess.run(["make", "-q", "image"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_twin_older_than_the_sources_is_refused_in_one_line():
    """A source changed since `make image`: the virtual table would run the
    old firmware, so mjctl says what to do instead (the source's time is
    put back afterwards)."""
    src = os.path.join(ROOT, "firmware", "faults.py")
    st = os.stat(src)
    twin = os.stat(os.path.join(ROOT, "build", "image", "micropython")).st_mtime
    try:
        os.utime(src, (st.st_atime, twin + 60))
        p = subprocess.run([MJCTL, "--sim", "status"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
    finally:
        os.utime(src, (st.st_atime, st.st_mtime))
    assert p.returncode == 1 and p.stdout == "", p      # the setup, not the table: exit 1
    assert p.stderr.splitlines() == ["mjctl: build/image/micropython is older than the firmware's"
                                     " sources: run `make image`"], p.stderr
