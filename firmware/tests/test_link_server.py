"""The link server's bound per poll, on both interpreters: a host that
never stops sending gets two answers per poll (the control loop polls at
every tick and when a request wakes it), and a line of garbage is read at
most eight times per poll; nothing is lost, the rest waits."""

from firmware import frame
from firmware.link import codec
from firmware.link.server import LinkServer
from firmware.fakes.hal import FakeHal

# The REQUEST frame kind: the codec's is a private constant, compiled away
# under MicroPython (test_cpy_private_consts.py checks this copy).
REQUEST = 0x10


class Line:
    """The host's side of the link: bytes waiting, answers written."""

    def __init__(self, data):
        self.data = data
        self.at = 0
        self.reads = 0
        self.out = []

    def readinto(self, buf):
        self.reads += 1
        n = min(len(buf), len(self.data) - self.at)
        buf[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n

    def write(self, buf, n):
        self.out.append(bytes(buf[:n]))
        return True


def _hello(seq):
    payload = ('{"op":"hello","proto":%d}' % codec.PROTO_VERSION).encode()
    return frame.encode(REQUEST, seq, payload)


def _server(data):
    hal = FakeHal()
    hal.link = Line(data)
    return LinkServer(hal, "0.0.0", "test"), hal.link


def test_a_flood_is_answered_two_a_poll_in_order_and_nothing_is_lost():
    server, line = _server(b"".join(_hello(seq) for seq in range(10)))
    server.poll(0)
    assert len(line.out) == 2
    for t in range(1, 4):
        server.poll(t)
    assert len(line.out) == 8
    server.poll(5)
    assert len(line.out) == 10 and server.requests == 10 and server.errors == 0
    seqs = [frame_seq(f) for f in line.out]
    assert seqs == list(range(10))


def test_garbage_is_read_at_most_eight_times_a_poll():
    server, line = _server(b"\x55" * 4096)
    server.poll(0)
    assert line.reads == 8 and line.out == []
    server.poll(1)
    assert line.reads == 16


def frame_seq(data):
    return data[3]              # sync x2, kind, seq



def _answers(server, line, payloads):
    """Each payload as one request, answered: [(kind, answer)]."""
    import json
    line.data = b"".join(frame.encode(REQUEST, (seq + 1) & 0xFF, p) for seq, p in enumerate(payloads))
    line.at = 0
    t = 0
    while len(line.out) < len(payloads) and t < 10 * len(payloads):
        server.poll(t)
        t += 1
    return [(f[2], json.loads(str(f[frame.HEADER:-2], "utf-8"))) for f in line.out]


def test_a_request_that_is_not_ascii_is_refused_and_named():
    server, line = _server(b"")
    got = _answers(server, line, [
        b'{"op":"\xe4\xb8\x80"}',                  # a raw UTF-8 character
        b'{"op":"\\u00e9"}',                       # an escape above U+007F
        b'{"op":"\\u0041"}',                       # an ASCII escape: read, then unknown
        b'{"op":"\\\\u4e00"}',                     # a backslash and a u: ASCII
        b'{"op":"status","x":"\\u4E00"}',
    ])
    assert [a["error"] for _, a in got] == ["bad_request", "bad_request", "unknown_op",
                                          "unknown_op", "bad_request"], got
    assert "byte 0xe4 at 7" in got[0][1]["message"], got[0]
    assert "\\u escape above U+007F at byte 7" in got[1][1]["message"], got[1]
    assert "'A'" in got[2][1]["message"], got[2]
    assert server.requests == 5 and server.errors == 5
