"""The bus's speed factor (host_tools/sim/bus.py), as `make run` uses it:
in real time, the virtual table's clock runs `speed` times the wall
clock."""

import os
import select
import struct
import threading
import time
import tty

import pytest
import serial

from firmware.frame import FrameReader, encode
from host_tools.sim import BusServer, VirtualTable


@pytest.fixture
def fast_bus():
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    port = serial.Serial(os.ttyname(slave), timeout=0.02)
    tv = VirtualTable(1)
    server = BusServer(port, tv, realtime=True, speed=4.0)
    stop = threading.Event()
    th = threading.Thread(target=server.serve, args=(stop.is_set,), daemon=True)
    th.start()
    yield master, tv
    stop.set()
    th.join(5)
    port.close()
    for fd in (master, slave):
        os.close(fd)


def _until_now(fd, reader, timeout=5.0):
    """Read frames until NOW; its time."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            continue
        data = os.read(fd, 4096)
        i = 0
        while i < len(data):
            i = reader.feed(data, i)
            if reader.ready and reader.kind == 0x83:
                return struct.unpack("<I", reader.payload())[0]
    raise AssertionError("no NOW")


def test_bus_real_time_runs_speed_times_the_wall_clock(fast_bus):
    fd, tv = fast_bus
    reader = FrameReader()
    seq = [0]

    def send(kind, payload):
        seq[0] = (seq[0] + 1) & 0xFF
        os.write(fd, encode(kind, seq[0], payload))

    send(0x01, b"\x01")                                    # HELLO: the clock's anchor
    send(0x04, struct.pack("<I", 0))
    assert _until_now(fd, reader) == 0
    t0 = time.monotonic()
    now = 0
    while now < 1200:                                      # the firmware's 10 ms ticks
        send(0x04, struct.pack("<I", now + 10))
        now = _until_now(fd, reader)
    wall = time.monotonic() - t0
    assert tv.now == 1200
    assert 0.27 <= wall <= 0.45, wall                      # 1.2 virtual s at 4x: 0.3 s


def test_speed_must_be_positive():
    with pytest.raises(ValueError):
        BusServer(None, None, realtime=True, speed=0)
