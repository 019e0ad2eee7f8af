"""The heap report of the sim bus (the HEAP frame, docs/hardware.md): the
parser of the GC's lines (host_tools/sim/heaplog.py), the table's end of
the frame, and the firmware's answer on the twin."""

import re
import struct
import time

from host_tools.bench.simrun import running
from host_tools.tests.vtable_helpers import bus  # noqa: F401  (the fixture)
from host_tools.sim import heaplog

# micropython.mem_info() of the twin in a 32 KB heap, after the boot and
# after a cycle, with what the firmware's log holds around it.
LOG = """\
mem: total=278807, current=191054, peak=191742
stack: 6640 out of 40000
GC: total: 32000, used: 27216, free: 4784
 No. of 1-blocks: 479, 2-blocks: 40, max blk sz: 36, max free sz: 258
something the firmware printed
mem: total=11007382, current=198785, peak=198913
stack: 6640 out of 40000
GC: total: 32000, used: 27520, free: 4480
 No. of 1-blocks: 481, 2-blocks: 41, max blk sz: 36, max free sz: 72
"""


def test_the_parser_gives_bytes_and_ignores_the_other_lines():
    assert heaplog.samples(LOG) == [(27216, 4784, 258 * 16), (27520, 4480, 72 * 16)]
    assert heaplog.samples(LOG, block=8)[1] == (27520, 4480, 72 * 8)


def test_the_parser_wants_both_lines_of_a_report_together():
    assert heaplog.samples("") == []
    assert heaplog.samples("Traceback (most recent call last):\nMemoryError:\n") == []
    lines = LOG.splitlines()
    assert heaplog.samples("\n".join(lines[:3])) == []           # the GC line only (yet)
    assert heaplog.samples("\n".join(lines[3:4])) == []          # a blocks line alone
    assert heaplog.samples("\n".join(lines[2:3] + lines[4:5] + lines[3:4])) == []


def test_the_table_sends_heap_once_before_the_next_now(bus):  # noqa: F811
    fw, server, tv, start, finish, state = bus
    fw.send(0x01, b"\x01")
    fw.send(0x04, struct.pack("<I", 0))
    assert 0x84 not in [k for k, _ in fw.frames_until_now()]
    server.request_heap_report()
    server.request_heap_report()                    # asked twice before the tick: one frame
    fw.send(0x04, struct.pack("<I", 100))
    frames = fw.frames_until_now()
    assert [k for k, _ in frames[-2:]] == [0x84, 0x83] and frames[-2][1] == b""
    assert [k for k, _ in frames].count(0x84) == 1
    fw.send(0x04, struct.pack("<I", 200))
    assert 0x84 not in [k for k, _ in fw.frames_until_now()]
    assert server.heap_reports == 1


def _check(text, sample):
    """A report against the GC's own total, from the same log."""
    used, free, max_free = sample
    total = int(re.findall(r"GC: total: (\d+)", text)[-1])
    assert used + free == total and 46 * 1024 < total <= 48 * 1024
    assert 0 < max_free <= free and max_free % heaplog.BYTES_PER_BLOCK == 0
    assert used > 16 * 1024                         # the firmware is in it


def _allocated(text):
    """MicroPython's count of bytes allocated since it started (mem_info)."""
    return int(re.findall(r"mem: total=(\d+)", text)[-1])


def test_the_twin_answers_a_heap_frame_with_the_gcs_lines():
    with running(seed=3, heap=48 * 1024) as (sim, link):
        time.sleep(0.2)
        assert heaplog.samples(sim.firmware_log()) == []        # only when asked
        first = heaplog.report(sim)
        text = sim.firmware_log()
        _check(text, first)
        assert heaplog.samples(text) == [first] and sim.server.heap_reports == 1
        # A cycle: far more allocated than the heap holds, so the GC has
        # collected on its own meanwhile; the report is still parsed.
        link.request("start")
        link.wait_event(lambda e: e["ev"] == "dice", 30)
        second = heaplog.report(sim)
        text = sim.firmware_log()
        _check(text, second)
        assert heaplog.samples(text) == [first, second]
        assert _allocated(text) > 4 * 48 * 1024
        assert "MemoryError" not in text and "Traceback" not in text
