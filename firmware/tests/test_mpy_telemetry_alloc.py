"""The telemetry's share of a tick allocates nothing in steady state
(MicroPython only: the ticks run under heap_lock, where any allocation
raises MemoryError): connected with nothing to send, and stepped aside
for a service session (link/aside.py's stand-in in the controller's
write). The real controller's ticks with it: host_tools/bench/mp_ticks.py."""

import gc
import sys

import micropython

from firmware.link import telemetry
from firmware.tests.test_telemetry import CONF, Ctl, Hal, Link, _again


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
    hal = Hal()
    link, ctl = Link(hal), Ctl()
    link.controller = ctl
    t = telemetry.Telemetry(link, ctl, CONF, (link, _again, 0, 0, 0, 0, 0, 0, 1))
    ctl.write = t.write
    sock = t.client = Sock()
    t.next_health = 1 << 29
    _ticks(ctl, hal, 2000)         # 20 s: a PINGREQ at 15 s too
    assert t.client is sock and t.errors == 0 and ctl.writes == 2000
    link.session_state = 1
    ctl.write()                    # the telemetry leaves
    assert sock.closed and "firmware.link.telemetry" not in sys.modules
    _ticks(ctl, hal, 1000)
    assert ctl.writes == 3001
