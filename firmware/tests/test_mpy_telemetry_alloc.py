"""The telemetry's share of a tick allocates nothing between its turns
(MicroPython only: the ticks run under heap_lock, where any allocation
raises MemoryError): connected with nothing to send, and stepped aside
for a service session (link/mqtthook.py's hooks in the controller's emit
and write). A turn (the health every 5 s, a ping every 15 s, an event)
allocates and is not steady state. The real controller's ticks with it:
host_tools/bench/mp_ticks.py."""

import gc
import sys

import micropython

from firmware.link import telemetry
from firmware.tests.test_telemetry import _hooked, _slot


class Sock:
    """A connected socket with nothing to read, that takes every write."""
    closed = False

    def readinto(self, buf):
        return None

    def write(self, b):
        return len(b)

    def close(self):
        self.closed = True


def _ticks(ctl, hal, n):
    gc.collect()
    micropython.heap_lock()
    try:
        for _ in range(n):
            hal.now += 10
            ctl.write()
    finally:
        micropython.heap_unlock()


def test_connected_and_aside_ticks_allocate_nothing():
    link, ctl, kept = _hooked(due=0)
    hal = link.hal
    t = telemetry.Telemetry(kept)
    sock = t.client = Sock()
    t.store()
    ctl.write()                    # a turn: the next one due at the ping, 15 s on
    assert _slot(kept, "due") == 15000 and ctl.writes == 1
    _ticks(ctl, hal, 1400)         # 14 s
    assert _slot(kept, "client") is sock and _slot(kept, "errors") == 0 and ctl.writes == 1401
    link.session_state = 1
    ctl.write()                    # the turn that steps aside
    assert sock.closed and "firmware.link.telemetry" not in sys.modules
    _ticks(ctl, hal, 1000)
    assert ctl.writes == 2402
