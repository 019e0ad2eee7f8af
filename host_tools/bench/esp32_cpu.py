"""The CPU cost of the control loop on the esp32 port: mp_cpu.py (the
setups of mp_ticks.py: the real controller, follower and link server on
preallocated stand-ins) run at the REPL of the board's QEMU image under
QEMU's `-icount shift=0,sleep=off`, where the guest's clock advances one
nanosecond an instruction: its `ticks_us` counts thousands of
instructions, the same at every run. The code runs from `make mpy`'s
.mpy files on the flash (the firmware's test stand-ins are not frozen):
the same bytecode as the frozen image, loaded into RAM.

What a count is not: a board's time. QEMU models no flash cache and no
pipeline; at the S3's 240 MHz an instruction a cycle is the fastest a
board can be (docs/performance.md, The esp32 port's CPU)."""

import json
import os
import select
import time

from host_tools.image.mpenv import ROOT, mpy_tree_fresh
from host_tools.sim.qemu_machine import QemuBoard

SCRIPTS = ("mp_ticks.py", "mp_cpu.py")
PROMPT_S = 60.0              # a prompt for a return at the REPL under -icount
RUN_S = 900.0                # mp_cpu.py's run under -icount (about 140 s here)
# At the REPL, the boot's frozen modules are dropped so that the .mpy tree
# on the flash (/b, first on the path) is what mp_cpu.py imports.
COMMAND = (b"import sys; [sys.modules.pop(k) for k in list(sys.modules) "
           b"if k.split('.')[0] in ('firmware', 'engine_core')]; "
           b"sys.path.insert(0, '/b'); import mp_cpu\r")
OPS = ("tick_idle", "tick_building", "tick_hand", "status", "hand_event")


def flash_files():
    """build/mpy's tree and the two scripts, under /b on the flash."""
    files = {}
    tree = ROOT / "build" / "mpy"
    for path in sorted(tree.rglob("*")):
        if path.is_file():
            files["b/" + path.relative_to(tree).as_posix()] = path.read_bytes()
    for name in SCRIPTS:
        files["b/" + name] = (ROOT / "host_tools" / "bench" / name).read_bytes()
    return files


def _read_until(fd, marks, seconds):
    out = b""
    end = time.monotonic() + seconds
    while not all(m in out for m in marks):
        if time.monotonic() > end:
            raise TimeoutError("QEMU's REPL said, before %.0f s ran out: %r"
                               % (seconds, out[-300:]))
        if select.select((fd,), (), (), 0.5)[0]:
            out += os.read(fd, 4096)
    return out


def run():
    """mp_cpu.py's figures on the esp32 port: {op: µs of the guest's clock}."""
    if not mpy_tree_fresh():
        raise RuntimeError("build/mpy is older than the sources: run `make mpy` (make bench does)")
    with QemuBoard(flash_files(), icount=True) as board:
        fd = os.open(board.port, os.O_RDWR | os.O_NOCTTY)
        try:
            # QemuBoard is back once the boot's prompt is out, on a raw pty
            # (mpenv.raw_pty): a return asks for a prompt of this session.
            os.write(fd, b"\r")
            _read_until(fd, (b">>> ",), PROMPT_S)
            os.write(fd, COMMAND)
            out = _read_until(fd, (b"CPU {", b"}\r\n>>> "), RUN_S)
        finally:
            os.close(fd)
    line = out[out.index(b"CPU {") + 4:].split(b"\r\n")[0]
    return json.loads(line)


def measure():
    got = run()
    figures = {"esp32_tick_instructions": round(got["tick_building"] * 1000),
               "esp32_status_instructions": round(got["status"] * 1000),
               "esp32_hand_event_instructions": round(got["hand_event"] * 1000)}
    details = {"instructions": {op: round(got[op] * 1000) for op in OPS},
               "at_240_mhz_us_at_least": {op: round(got[op] * 1000 / 240, 1) for op in OPS},
               "n": got["n"], "platform": got["platform"], "version": got["version"]}
    return figures, details
