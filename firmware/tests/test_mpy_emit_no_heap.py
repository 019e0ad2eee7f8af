"""An event with no heap for it is dropped and counted, and nothing is
raised into the control loop (MicroPython only: heap_lock makes the dict's
growth fail as a full heap would)."""

import micropython

from firmware.link.server import LinkServer
from firmware.tests.fakehal import FakeHal


class Line:
    def __init__(self):
        self.sent = 0

    def readinto(self, buf):
        return 0

    def write(self, buf, n):
        self.sent += 1
        return True


def test_an_event_without_heap_is_dropped_and_counted():
    hal = FakeHal()
    hal.link = Line()
    server = LinkServer(hal, "0.0.0", "test")
    server.emit("refused", {"seat": 1, "reason": "x"})       # with heap: sent
    assert hal.link.sent == 1 and server.dropped == 0
    fields = {"seat": 2, "reason": "y"}                       # full: "ev" and "t" must grow it
    micropython.heap_lock()
    try:
        server.emit("refused", fields)
    finally:
        micropython.heap_unlock()
    assert hal.link.sent == 1 and server.dropped == 1
