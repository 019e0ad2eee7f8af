# MicroPython only: the CPU cost of the control loop's work, in the setups
# of mp_ticks.py (the real controller and follower on preallocated
# stand-ins), timed with the port's own time.ticks_us():
#     micropython host_tools/bench/mp_cpu.py CODE_ROOT     (the twin: wall µs)
# and on the esp32 port in QEMU under -icount, where a microsecond of the
# guest's clock is a thousand instructions (esp32_cpu.py imports it at the
# REPL). Prints one line: CPU {json}, µs per operation:
#   tick_idle       one control step of an idle table
#   tick_building   one control step of a build in full swing
#   tick_hand       one step of the hand follower on an unchanged wall
#   status          one `status` request read, answered and written
#   hand_event      a draw seen by the follower: its rounds read and its
#                   `hand` event published
import json
import sys
import time

if len(sys.argv) > 1:
    sys.path.insert(0, sys.argv[1])

import mp_ticks  # noqa: E402
from firmware import frame  # noqa: E402
from firmware.link.handlers import HANDLERS
from firmware.link import protocol  # noqa: E402
from firmware.link.server import LinkServer  # noqa: E402

N = 200
REQUEST = protocol.REQUEST


class Line:
    """The host's side of the link: `status` requests waiting, answers dropped."""

    def __init__(self, data):
        self.data = data
        self.at = 0

    def readinto(self, buf):
        n = min(len(buf), len(self.data) - self.at)
        buf[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n

    def write(self, buf, n):
        return True


def per_step(setup, n=N):
    s = setup()
    t = time.ticks_us()
    for _ in range(n):
        s.step()
    return time.ticks_diff(time.ticks_us(), t) / n


def status(n=N):
    b = mp_ticks.Building(False)
    payload = b'{"op":"status"}'
    data = b"".join(frame.encode(REQUEST, seq & 0xFF, payload) for seq in range(1, n + 1))
    server = LinkServer(b.hal, "0.0.0", "bench")
    b.hal.link = Line(data)
    server.attach(b.ctl, HANDLERS)
    t = time.ticks_us()
    for i in range(n):
        server.poll(i)             # one request a poll: each poll reads its frame and answers
    us = time.ticks_diff(time.ticks_us(), t) / n
    if server.requests != n or server.errors:
        raise RuntimeError("status: %d requests, %d errors" % (server.requests, server.errors))
    return us


def hand_event(n=20):
    total = 0
    for _ in range(n):
        top = mp_ticks.opened()
        wall = top.shadow.wall
        before = len(top.states())
        top.take(wall.geo.slot_of_pos[wall.head_pos()])
        t = time.ticks_us()
        top.read_rounds(3)
        total += time.ticks_diff(time.ticks_us(), t)
        if len(top.states()) != before + 1:
            raise RuntimeError("hand_event: the draw was not published")
    return total / n


def main():
    out = {"tick_idle": per_step(lambda: mp_ticks.Building(False)),
           "tick_building": per_step(lambda: mp_ticks.Building(True)),
           "tick_hand": per_step(mp_ticks.Following),
           "status": status(), "hand_event": hand_event(),
           "n": N, "proto": protocol.PROTO_VERSION,
           "platform": sys.platform, "version": "%d.%d.%d" % sys.implementation.version[:3]}
    print("CPU " + json.dumps(out))


main()
