"""Allocation of the control loop in steady state, under MicroPython
(mp_ticks.py, the setups of firmware/tests/test_mpy_loop_alloc.py and
test_mpy_follow_alloc.py): idle ticks of the real controller, ticks of a
build in full swing, and the hand follower's ticks on an unchanged wall.
Each phase runs its ticks under micropython.heap_lock() (any allocation
raises: the ticks done before one are counted) and again with the GC off
(gc.mem_alloc() after minus before). alloc_per_tick_bytes is the worst
phase's bytes per tick; it is 0 only when every phase also ran all its
ticks under the lock."""

import json
import subprocess
from pathlib import Path

from host_tools.image.mpenv import code_root, micropython_binary

SCRIPT = Path(__file__).with_name("mp_ticks.py")


def measure(source=False):
    cwd, code = code_root(source)
    p = subprocess.run([str(micropython_binary()), str(SCRIPT), str(cwd)],
                       cwd=str(cwd), capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("mp_ticks.py failed (exit %d): %s" % (p.returncode, p.stderr.strip()))
    out = json.loads(p.stdout.strip().splitlines()[-1])
    worst = 0.0
    for name, ph in out["phases"].items():
        ph["bytes_per_tick"] = ph["bytes"] / float(max(1, ph["ticks_measured"]))
        worst = max(worst, ph["bytes_per_tick"])
        if ph["ticks_under_heap_lock"] < ph["ticks"] and ph["bytes"] == 0:
            # an allocation freed within the tick: the lock saw it, the count not
            raise RuntimeError("%s: tick %d allocated under heap_lock, but no bytes were "
                               "left allocated" % (name, ph["ticks_under_heap_lock"] + 1))
    figures = {"alloc_per_tick_bytes": worst}
    details = dict(out, code=code)
    return figures, details
