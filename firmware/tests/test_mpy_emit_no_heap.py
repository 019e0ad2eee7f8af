"""An event with no heap for it is dropped and counted, and nothing is
raised into the control loop (MicroPython only: heap_lock makes the dict's
growth fail as a full heap would)."""

import micropython

from firmware.link.server import LinkServer
from firmware.fakes.hal import FakeHal


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


def test_a_request_without_heap_for_its_answer_raises_nothing():
    """With no heap at all, not even for the error saying so, the request
    is counted and dropped (the host asks again); poll raises nothing into
    the control loop, whose fault path would then have no heap either."""
    from firmware import frame
    from firmware.tests.test_link_server import REQUEST

    class HostLine:                # its reads allocate nothing either
        def __init__(self, data):
            self.data, self.at, self.sent = data, 0, 0

        def readinto(self, buf):
            n = min(len(buf), len(self.data) - self.at)
            for i in range(n):
                buf[i] = self.data[self.at + i]
            self.at += n
            return n

        def write(self, buf, n):
            self.sent += 1
            return True
    hal = FakeHal()
    hal.link = line = HostLine(frame.encode(REQUEST, 7, b'{"op":"status","x":1}'))
    server = LinkServer(hal, "0.0.0", "test")
    micropython.heap_lock()
    try:
        server.poll(0)
        raised = None
    except Exception as e:         # noqa: BLE001  (what the test is about)
        raised = e
    finally:
        micropython.heap_unlock()
    assert raised is None, raised
    assert server.requests == 1 and server.errors == 1 and server.dropped == 1
    assert line.sent == 0
