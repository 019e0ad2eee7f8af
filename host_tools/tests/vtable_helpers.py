"""What the virtual table's tests share (test_vtable_*.py, and the soak's,
the hand players' and the heap log's tests).

The table is driven directly in virtual time by a scripted "ideal
controller" (`Ctl`) that only sees what firmware would see: input edges and
UART bytes. Its frames are encoded and parsed here from docs/hardware.md,
not with the model's helpers, so a framing mistake on either side shows.
`bus` is the table's bus (host_tools/sim/bus.py) over a real pty, with the
firmware's end of it (`FwSide`).
"""

import json
import os
import select
import threading
import time
import tty
from collections import Counter

import pytest
import serial

from engine_core import rulesets, tiles
from firmware.frame import FrameReader, encode
from host_tools.sim import BusServer, VirtualTable
from host_tools.sim.config import DEFAULT_PATH


RULES = rulesets.load("fuzhou144")
S = RULES.stacks
CAP = 2 * S
WANT = Counter(tiles.tile_id(c) for c in RULES.tile_codes())
DICE_MS = json.loads(DEFAULT_PATH.read_text())["timings"]["dice_roll_ms"]


# -- frames, from docs/hardware.md -------------------------------------------

def rfid_req(cmd, data=b""):
    x = cmd ^ len(data)
    for b in data:
        x ^= b
    return bytes([0x02, cmd, len(data)]) + bytes(data) + bytes([x, 0x03])


def disp_frame(cmd, data=b""):
    s = (cmd + len(data) + sum(data)) & 0xFF
    return bytes([0x7E, cmd, len(data)]) + bytes(data) + bytes([s, 0x7F])


def take_rfid(buf):
    """One reply off the front of buf: (cmd, data, xor_ok) or None."""
    if len(buf) < 3 or len(buf) < buf[2] + 5:
        return None
    assert buf[0] == 0x02
    n = buf[2]
    cmd, data, xor, etx = buf[1], bytes(buf[3:3 + n]), buf[3 + n], buf[4 + n]
    assert etx == 0x03
    x = cmd ^ n
    for b in data:
        x ^= b
    del buf[:n + 5]
    return cmd, data, x == xor


def scan_entries(data):
    side, count = data[0], data[1]
    assert len(data) == 2 + 5 * count
    out = {}
    for i in range(count):
        slot = data[2 + 5 * i]
        out[slot] = int.from_bytes(data[3 + 5 * i:7 + 5 * i], "big")
    return side, out


def tid_of(uid):
    assert uid >> 16 == 0x4D4A, "%08x is not a table tag" % uid
    return (uid >> 8) & 0xFF


def side_slots(side):
    return {(side * S + k) * 2 + layer for k in range(S) for layer in (0, 1)}


# -- a scripted ideal controller ---------------------------------------------

class Ctl:
    def __init__(self, tv, step=5):
        self.tv = tv
        self.step = step
        self.cfg = tv.config
        self.level = tv.inputs()
        self.edges = []             # ("in", pin, value, at) as seen
        self.counts = [0] * 4
        self.rotations = 0
        self.auto_stop = True       # a lane off at 2S tiles
        self.rfid_rx = bytearray()
        self.disp_rx = bytearray()
        self.acks = []

    def pin(self, name, i=None):
        return self.cfg.pin(name, i)

    def out(self, name, i, value):
        self.tv.set_output(self.pin(name, i), value)

    def tick(self):
        tv = self.tv
        for ev in tv.advance_to(tv.now + self.step):
            if ev[0] == "uart":
                (self.disp_rx if ev[1] == 1 else self.rfid_rx).extend(ev[2])
                continue
            _, pin, v, at = ev
            assert at <= tv.now
            self.edges.append(ev)
            self.level[pin] = v
            name, i = self.cfg.names[pin]
            if name == "lane_count" and v:
                self.counts[i] += 1
                if self.counts[i] >= CAP and self.auto_stop:
                    self.out("lane_feed", i, 0)
            elif name == "plate_rotation" and v:
                self.rotations += 1
        while len(self.disp_rx) >= 6:
            assert self.disp_rx[:3] == b"\x7e\x80\x01"
            self.acks.append((self.disp_rx[3], tv.now))
            del self.disp_rx[:6]

    def wait(self, pred, limit_ms):
        end = self.tv.now + limit_ms
        while not pred():
            if self.tv.now >= end:
                return False
            self.tick()
        return True

    def wait_ms(self, ms):
        self.wait(lambda: False, ms)

    def rfid(self, cmd, data=b"", limit_ms=1000):
        self.tv.uart_write(2, rfid_req(cmd, data))
        got = []
        self.wait(lambda: got.append(take_rfid(self.rfid_rx)) or got[-1] is not None, limit_ms)
        return got[-1]

    def scan(self, side, level=None):
        data = bytes([side]) if level is None else bytes([side, level])
        cmd, body, ok = self.rfid(0x10, data)
        assert cmd == 0x90 and ok
        got_side, entries = scan_entries(body)
        assert got_side == side
        return entries

    def display(self, cmd, data=b""):
        self.tv.uart_write(1, disp_frame(cmd, data))

    def start_build(self):
        self.counts = [0] * 4
        self.out("plate_motor", None, 800)
        for n in range(4):
            self.out("lane_feed", n, 1)

    def build_and_audit(self, limit_ms=60000):
        """Feed until every lane has 2S tiles, scanning each side (level 0)
        as soon as its lane is full; the plate goes off at the end."""
        scans = {}
        end = self.tv.now + limit_ms
        while len(scans) < 4:
            assert self.tv.now < end, "build did not finish: %s" % self.counts
            ready = [n for n in range(4) if self.counts[n] >= CAP and n not in scans]
            if ready:
                scans[ready[0]] = self.scan(ready[0], 0)
            else:
                self.tick()
        self.out("plate_motor", None, 0)
        return scans

    def lift(self, up=True, sides=range(4), limit_ms=5000):
        drive, sw = ("lift_up", "lift_top") if up else ("lift_down", "lift_bottom")
        pending = set(sides)
        for n in pending:
            self.out(drive, n, 1)
        end = self.tv.now + limit_ms
        while pending and self.tv.now < end:
            self.tick()
            for n in list(pending):
                if self.level[self.pin(sw, n)]:
                    self.out(drive, n, 0)
                    pending.discard(n)
        for n in pending:
            self.out(drive, n, 0)
        return not pending

    def cycle(self, dealer=0):
        """One build: returns (start, finish, scans). Finish = final dice shown."""
        t0 = self.tv.now
        self.start_build()
        scans = self.build_and_audit()
        assert self.lift(True)
        self.display(0x03, bytes([dealer, 0]))
        key = self.pin("keys", dealer)
        assert self.wait(lambda: self.level[key] == 1, 3000), "the dealer never pressed"
        self.display(0x02, bytes([0, 0, 1]))
        self.wait_ms(DICE_MS)
        self.display(0x02, bytes([3, 5, 0]))
        self.wait_ms(20)
        finish = [t for t, what, v in self.tv.display.history if what == "dice" and v[2] == 0][-1]
        assert self.lift(False)
        return t0, finish, scans


def multiset(scans):
    return Counter(tid_of(uid) for entries in scans.values() for uid in entries.values())


def built(tv, limit_ms=45000):
    ctl = Ctl(tv)
    ctl.start_build()
    ctl.wait(lambda: ctl.counts == [CAP] * 4, limit_ms)
    return ctl


# -- the bus over a real pty --------------------------------------------------

class FwSide:
    """The firmware's end of the bus on the pty master."""

    def __init__(self, fd):
        self.fd = fd
        self.reader = FrameReader()
        self.seq = 0
        self.pending = b""

    def send(self, kind, payload=b""):
        self.seq = (self.seq + 1) & 0xFF
        os.write(self.fd, encode(kind, self.seq, payload))

    def drain(self):
        """The frames already written (the server has returned)."""
        r, _, _ = select.select([self.fd], [], [], 0)
        if r:
            self.pending += os.read(self.fd, 65536)
        out = []
        while self.pending:
            i = self.reader.feed(self.pending)
            self.pending = self.pending[i:]
            if self.reader.ready:
                out.append((self.reader.kind, self.reader.payload()))
        return out

    def frames_until_now(self, timeout=5.0):
        """Every frame up to and including NOW (or until timeout)."""
        out = []
        end = time.monotonic() + timeout
        while True:
            while self.pending:
                i = self.reader.feed(self.pending)
                self.pending = self.pending[i:]
                if self.reader.ready:
                    out.append((self.reader.kind, self.reader.payload()))
                    if self.reader.kind == 0x83:
                        return out
            left = end - time.monotonic()
            if left <= 0:
                return out
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                self.pending += os.read(self.fd, 4096)


@pytest.fixture
def bus():
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    port = serial.Serial(os.ttyname(slave), timeout=0.02)
    tv = VirtualTable(1)
    server = BusServer(port, tv)
    state = {"stop": threading.Event(), "result": [], "thread": None}

    def start():
        state["stop"].clear()
        th = threading.Thread(target=lambda: state["result"].append(
            server.serve(state["stop"].is_set)), daemon=True)
        th.start()
        state["thread"] = th

    def finish():
        state["thread"].join(5)
        return state["result"][-1]

    start()
    yield FwSide(master), server, tv, start, finish, state
    state["stop"].set()
    if state["thread"] is not None:
        state["thread"].join(5)
    port.close()
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass
