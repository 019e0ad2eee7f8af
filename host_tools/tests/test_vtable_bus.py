"""The virtual table's bus (host_tools/sim/bus.py) over a real pty, as the
firmware's end of it (vtable_helpers.FwSide) speaks it: hello, ticks, UART
bytes, a stop, a power cut, end of file, a hang, and real time."""

import os
import struct
import time

from host_tools.tests.vtable_helpers import bus, disp_frame  # noqa: F401  (bus: the fixture)


def test_bus_hello_tick_uart_and_stop(bus):
    fw, server, tv, start, finish, state = bus
    os.write(fw.fd, b"\x00garbage\xa5")
    fw.send(0x02, struct.pack("<BH", 4, 800))          # before HELLO: ignored
    fw.send(0x01, b"\x01")                                 # HELLO: INs, no NOW
    fw.send(0x04, struct.pack("<I", 0))                    # the first TICK brings it
    frames = fw.frames_until_now()
    assert [k for k, _ in frames] == [0x81] * len(tv.config.inputs) + [0x83]
    levels = {p[0]: p[1] for k, p in frames[:-1]}
    assert levels[tv.config.pin("lift_bottom", 3)] == 1 and struct.unpack("<I", frames[-1][1]) == (0,)
    assert tv.plate.duty == 0

    fw.send(0x02, struct.pack("<BH", tv.config.pin("plate_motor"), 800))
    fw.send(0x03, b"\x01" + disp_frame(0x03, bytes([0, 0])))
    fw.send(0x04, struct.pack("<I", 2500))
    frames = fw.frames_until_now()
    kinds = [k for k, _ in frames]
    assert kinds[-1] == 0x83 and struct.unpack("<I", frames[-1][1]) == (2500,)
    assert set(kinds[:-1]) == {0x81, 0x82}
    ats = []
    for k, p in frames[:-1]:
        if k == 0x81:
            pin, value, at = struct.unpack("<BBI", p)
            assert pin == tv.config.pin("plate_rotation") and at <= 2500
            ats.append(at)
        else:
            assert p == b"\x01\x7e\x80\x01\x03\x84\x7f"
    assert ats == sorted(ats) and len(ats) >= 4

    fw.send(0x77, b"junk")                                 # good CRC, unknown kind
    fw.send(0x04, b"\x01")                                 # TICK with a bad payload
    fw.send(0x05, struct.pack("<H", 0))
    fw.send(0x04, struct.pack("<I", 100))                  # in the past: nothing moves
    frames = fw.frames_until_now()
    assert frames == [(0x83, struct.pack("<I", 2500))]
    state["stop"].set()
    assert finish() == "stopped"
    st = server.stats()
    assert st["garbage_frames"] == 2 and st["ignored"] == 1 and st["garbage_bytes"] >= 8


def test_bus_power_cut_then_hello_continues_the_machine(bus):
    fw, server, tv, start, finish, state = bus
    fw.send(0x01, b"\x01")
    fw.send(0x04, struct.pack("<I", 0))
    fw.frames_until_now()
    tv.inject("power_cut:1.2")
    fw.send(0x02, struct.pack("<BH", tv.config.pin("plate_motor"), 800))
    fw.send(0x04, struct.pack("<I", 5000))
    assert finish() == "power_cut" and tv.now == 1200
    frames = fw.drain()
    assert frames and all(k == 0x81 for k, _ in frames)     # no NOW after the cut
    assert max(struct.unpack("<BBI", p)[2] for _, p in frames) <= 1200
    start()                                                 # the launcher restarts
    fw.send(0x02, struct.pack("<BH", tv.config.pin("plate_motor"), 800))   # the old firmware
    fw.send(0x01, b"\x01")
    fw.send(0x04, struct.pack("<I", 10))                   # its clock starts at 0: "the past"
    frames = fw.frames_until_now()
    assert [k for k, _ in frames] == [0x81] * len(tv.config.inputs) + [0x83]
    assert frames[-1] == (0x83, struct.pack("<I", 1200)) and tv.plate.duty == 0
    assert server.stats()["ignored"] == 1 and server.hellos == 2


def test_bus_eof_and_hung(bus):
    fw, server, tv, start, finish, state = bus
    server.hung_s = 0.2
    assert finish() == "hung"
    server.hung_s = 10.0
    start()
    os.close(fw.fd)
    assert finish() == "eof"


def test_bus_real_time_holds_now(bus):
    fw, server, tv, start, finish, state = bus
    server.realtime = True
    fw.send(0x01, b"\x01")
    fw.send(0x04, struct.pack("<I", 0))
    fw.frames_until_now()
    t = time.monotonic()
    fw.send(0x04, struct.pack("<I", 150))
    assert fw.frames_until_now()[-1][0] == 0x83
    assert time.monotonic() - t >= 0.14
