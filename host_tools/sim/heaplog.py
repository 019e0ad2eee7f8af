"""The GC's own figures of the firmware's heap, on the virtual table.

A HEAP frame on the sim bus (docs/hardware.md) makes the sim HAL run
`gc.collect()` then `micropython.mem_info()`, whose lines land in the
firmware's log (SimTable.firmware_log()) among whatever else it prints:

    GC: total: 32000, used: 9344, free: 22656
     No. of 1-blocks: 120, 2-blocks: 31, max blk sz: 40, max free sz: 812

`used` and `free` are bytes; `max free sz`, the longest run of free blocks,
is in blocks (py/gc.c, gc_dump_info), 16 bytes each on a 32-bit build
(MICROPY_BYTES_PER_GC_BLOCK: four 4-byte words), as on the ESP32 and the
twin. MicroPython has no Python call that gives it.
"""

import re
import time

BYTES_PER_BLOCK = 16
_GC = re.compile(r"GC: total: \d+, used: (\d+), free: (\d+)")
_BLOCKS = re.compile(r" No\. of 1-blocks: \d+, 2-blocks: \d+, max blk sz: \d+, max free sz: (\d+)")


def samples(text, block=BYTES_PER_BLOCK):
    """Every report in `text`: a list of (used, free, max_free_bytes). A
    report is the GC line and the blocks line right after it; other lines
    are ignored, and so is a report whose second line is not there (yet)."""
    out = []
    last = None                # the GC line just before, as (used, free)
    for line in text.splitlines():
        m = _BLOCKS.match(line)
        if m is not None and last is not None:
            out.append((last[0], last[1], int(m.group(1)) * block))
        m = _GC.match(line)
        last = (int(m.group(1)), int(m.group(2))) if m is not None else None
    return out


def report(sim, timeout=5.0, poll_s=0.005):
    """Ask the firmware of `sim` (a started SimTable) for a report and wait
    for it in its log: (used, free, max_free_bytes). The frame goes with the
    answer to the firmware's next tick, so it comes within a tick's wall time
    while the firmware runs; TimeoutError when it does not."""
    before = len(samples(sim.firmware_log()))
    sim.server.request_heap_report()
    deadline = time.monotonic() + timeout
    while True:
        got = samples(sim.firmware_log())
        if len(got) > before:
            return got[before]
        if time.monotonic() > deadline:
            raise TimeoutError("no heap report in the firmware's log after %.1f s" % timeout)
        time.sleep(poll_s)
