"""The telemetry's share of a tick allocates nothing between its turns
(MicroPython only: the ticks run under heap_lock, where any allocation
raises MemoryError): connected with nothing to send, and stepped aside
for a service session (its `poll`, which the loop calls after each
step). A turn (the health every 5 s, a ping every 15 s, an event)
allocates and is not steady state. The real controller's ticks with it:
host_tools/bench/mp_ticks.py."""

import gc

import micropython

from firmware.tests.test_telemetry import _telemetry, _turns


class Sock:
    """A connected socket with nothing to read, that takes every write."""
    closed = False

    def readinto(self, buf):
        return None

    def write(self, b):
        return len(b)

    def close(self):
        self.closed = True


def _ticks(t, n):
    gc.collect()
    micropython.heap_lock()
    try:
        for _ in range(n):
            t.link.hal.now += 10
            t.poll(t.link.hal.now)
    finally:
        micropython.heap_unlock()


def test_connected_and_aside_ticks_allocate_nothing():
    t = _telemetry(due=0)
    sock = t.client = Sock()
    turns = _turns(t)
    t.poll(0)                      # a turn: the next one due at the ping, 15 s on
    assert t.due == 15000 and turns == [0]
    _ticks(t, 1400)                # 14 s
    assert t.client is sock and t.errors == 0 and turns == [0]
    t.link.session_state = 1
    t.poll(t.link.hal.now)         # steps aside
    assert sock.closed and t.client is None
    _ticks(t, 1000)
    assert turns == [0] and t.link.errors == 0
