"""`make run`: the table view (host_tools/tableview/) and the bus's speed factor.

The runs are real: the firmware under the MicroPython unix port on the
virtual table, in real-time mode at a speed the two processes cannot reach
(200x: they run as fast as they can, about 2 s a run).
"""

import io
import os
import re
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import tty

import pytest
import serial

from firmware import faults as fault_table
from firmware.link.frame import FrameReader, encode
from host_tools import tableview
from host_tools.mjctl import describe_fault
from host_tools.mpenv import ROOT
from host_tools.vtable import BusServer, VirtualTable

FAST = ["--speed", "200"]
LINE = re.compile(r"^\s*(\d+\.\d{3})  (> )?(\S+)\s*(.*)$")


def run_view(*args, timeout=60):
    """The view as `make run` starts it, stdout a pipe (so: plain lines)."""
    p = subprocess.run([sys.executable, "-m", "host_tools.tableview"] + FAST + list(args),
                       cwd=str(ROOT), capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def parse(stdout):
    """[(t_s, who, name, fields)] of the event lines; who: "link" or "host"."""
    out = []
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            out.append((float(m.group(1)), "host" if m.group(2) else "link", m.group(3),
                        m.group(4)))
    return out


def link_names(entries):
    """Link events, a state event named by its state."""
    return [f.split("=", 1)[1] if name == "state" else name
            for _, who, name, f in entries if who == "link"]


def in_order(seq, want):
    """Is `want` a subsequence of `seq`?"""
    it = iter(seq)
    return all(any(x == w for x in it) for w in want)


CYCLE = ["walls", "lifting", "dealer", "rolling", "dice", "in_hand"]


# -- plain runs --------------------------------------------------------------

def test_plain_mode_plays_two_cycles_in_order():
    p = run_view("--cycles", "2")
    assert p.returncode == 0, p.stderr
    assert "\x1b[" not in p.stdout                       # no ANSI without a terminal
    entries = parse(p.stdout)
    names = link_names(entries)
    assert in_order(names, ["building"] + CYCLE + CYCLE), names
    assert names.count("dice") == 2 and "fault" not in names
    hosts = [n for _, who, n, _ in entries if who == "host"]
    assert hosts == ["start", "hand_end"]
    # The next cycle starts when the hand ends (8 s after the dice by default);
    # the second set, half built by then, is finished (firmware fix: it used
    # to be counted again from zero, ending in a false lane_jam).
    t_dice = next(t for t, _, n, _ in entries if n == "dice")
    t_end = next(t for t, who, n, _ in entries if n == "hand_end")
    assert t_end >= t_dice + 8.0
    after = link_names([e for e in entries if e[0] >= t_end])
    assert after[0] == "building"
    assert p.stdout.splitlines()[-1].startswith("# stopped after 2 cycles")


def test_a_long_hand_lifts_the_next_set_at_once():
    p = run_view("--cycles", "2", "--hand", "40")
    assert p.returncode == 0, p.stderr
    entries = parse(p.stdout)
    t_end = next(t for t, who, n, _ in entries if n == "hand_end")
    nexts = [t for t, _, n, f in entries if n == "walls" and "next=True" in f]
    assert nexts and nexts[0] < t_end                     # built during the hand
    after = link_names([e for e in entries if e[0] >= t_end])
    assert after[:2] == ["lifting", "dealer"], after      # lifted at once


def test_a_lane_jam_shows_its_fix_then_the_cycles_go_on():
    p = run_view("--cycles", "1", "--fault", "lane_jam:1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    i = next(i for i, line in enumerate(lines) if re.search(r"\bfault\s+code=10\b", line))
    assert "name=lane_jam" in lines[i] and '"lane":1' in lines[i]
    name, cause, fix = fault_table.describe(10)
    assert lines[i + 1].split() == ["cause:"] + cause.split()
    assert lines[i + 2].split() == ["fix:"] + fix.split()
    entries = parse(p.stdout)
    names = [n for _, _, n, _ in entries]
    assert in_order(names, ["fault", "technician", "clear", "cleared", "walls", "dice"]), names
    fixed = next(f for _, _, n, f in entries if n == "technician")
    assert "lane_jam:1" in fixed
    assert next(f for _, _, n, f in entries if n == "cleared") == "code=10 resume=building"


def test_a_display_unplugged_is_cleared_and_the_dealer_shown_again():
    # Firmware fix: the frame never ACKed raised the fault again right after
    # `clear`, and the replugged (blank) board never showed the dealer lamp.
    p = run_view("--cycles", "1", "--fault", "display_unplugged")
    assert p.returncode == 0, p.stderr
    entries = parse(p.stdout)
    assert [n for _, _, n, _ in entries].count("fault") == 1
    names = link_names(entries)
    assert in_order(names, ["dealer", "fault", "cleared", "dealer", "rolling", "dice"]), names


def _children(pid):
    out = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            out += [int(c) for c in f.read().split()]
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_ctrl_c_stops_cleanly_and_stops_the_firmware():
    p = subprocess.Popen([sys.executable, "-m", "host_tools.tableview"] + FAST,
                         cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in p.stdout:
            seen.append(line)
            if " dice " in line:
                break
        firmware = _children(p.pid)
        assert firmware, "no firmware process"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "# stopped after" in out
    for pid in firmware:
        assert not os.path.exists("/proc/%d" % pid)


def test_a_bad_fault_name_is_refused():
    p = run_view("--fault", "no_such_fault", timeout=20)
    assert p.returncode == 2 and "unknown fault" in p.stderr


# -- snapshot and render -----------------------------------------------------

def _disp(cmd, data=b""):
    s = (cmd + len(data) + sum(data)) & 0xFF
    return bytes([0x7E, cmd, len(data)]) + bytes(data) + bytes([s, 0x7F])


@pytest.fixture
def busy_table():
    """A VirtualTable driven by hand: building, lifter 0 rising, a dealer lamp,
    dice shown, seat 2 pressing its key."""
    tv = VirtualTable(3)
    pin = tv.config.pin
    tv.set_output(pin("plate_motor"), 800)
    for side in range(4):
        tv.set_output(pin("lane_feed", side), 1)
    tv.advance_to(6000)
    tv.set_output(pin("lift_up", 0), 1)
    tv.uart_write(1, _disp(0x03, bytes([1, 2])))
    tv.uart_write(1, _disp(0x02, bytes([3, 5, 0])))
    tv.players.press(2, hold_ms=2000)
    tv.advance_to(7000)
    return tv


def test_the_snapshot_reflects_the_table(busy_table):
    tv = busy_table
    snap = tableview.snapshot(tv, tableview.ViewState(seed=3, speed=5.0, code="test"))
    assert [l["tiles"] for l in snap["lanes"]] == [len(l.wall.tiles) for l in tv.lanes]
    assert sum(l["tiles"] for l in snap["lanes"]) > 10
    assert all(l["feed"] and l["cap"] == 36 for l in snap["lanes"])
    assert snap["plate"]["turning"] and snap["plate"]["revolutions"] == tv.plate.revolutions
    assert snap["plate"]["tiles"] == len(tv.plate.queue)
    l0, l1 = snap["lifters"][0], snap["lifters"][1]
    assert l0["moving"] == "up" and 0 < l0["pos"] < 1
    assert l1["moving"] is None and l1["pos"] == 0 and l1["at_bottom"]
    assert snap["display"]["dealer"] == 1 and snap["display"]["streak"] == 2
    assert snap["display"]["dice"] == (3, 5, 0) and snap["display"]["gold"] is None
    assert [k["down"] for k in snap["keys"]] == [False, False, True, False]
    assert snap["now_ms"] == 7000 and snap["in_play"] == [0, 0, 0, 0]
    assert snap["fault"] is None and snap["state"] is None


def _full_view():
    view = tableview.ViewState(seed=3, speed=5.0, code="mpy", target=4)
    view.state = "fault"
    view.cycles = 2
    view.last_cycle = {"n": 2, "dice": [3, 5], "dealer": 1, "table_time_s": 33.1,
                       "lower_bound_s": 32.4}
    view.winner = None
    view.fault = dict(describe_fault({"code": 10, "t": 6100, "detail": {"lane": 1, "count": 0}}),
                      active=True, cleared_t=None, resume=None)
    view.fix_at = 20000
    for i, (name, fields) in enumerate([("state", {"state": "building"}),
                                        ("walls", {"tiles_per_side": [36, 36, 36, 36]}),
                                        ("fault", {"code": 10, "detail": {"lane": 1},
                                                   "name": "lane_jam"})]):
        view.record(1000 * i, name, fields)
    view.record(5000, "hand_end", {"winner": None}, host=True)
    return view


@pytest.mark.parametrize("width", [80, 120])
def test_the_view_renders_at_80_and_120_columns(busy_table, width):
    from rich.console import Console

    for view in (tableview.ViewState(), _full_view()):
        snap = tableview.snapshot(busy_table, view)
        buf = io.StringIO()
        console = Console(file=buf, width=width, force_terminal=True, color_system="truecolor")
        console.print(tableview.render(snap, width))
        text = re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())
        lines = text.splitlines()
        assert all(console.measure(line).maximum <= width for line in lines)
        assert len(lines) <= 45
        for want in ("lane", "lifter", "plate", "dealer", "dice", "3 + 5", "in play"):
            assert want in text, want
    assert "lane_jam" in text and "technician comes in" in text
    assert "Open the lane cover" in text                       # the fix
    assert "33.10 s table time" in text and "> hand_end" in text


def test_plain_lines_of_events_and_faults():
    entry = {"t": 32610, "name": "dice", "fields": {"a": 3, "b": 2, "dealer": 0}, "host": False}
    assert tableview.plain_lines(entry) == ["    32.610  dice       a=3 b=2 dealer=0"]
    entry = {"t": 41980, "name": "hand_end", "fields": {"winner": None}, "host": True}
    assert tableview.plain_lines(entry) == ["    41.980  > hand_end winner=null"]
    entry = {"t": 6100, "name": "fault", "fields": {"code": 10}, "host": False}
    lines = tableview.plain_lines(entry, (("cause", "c c"), ("fix", "f f")))
    assert lines[1:] == ["            cause: c c", "            fix:   f f"]


# -- the bus's speed factor ------------------------------------------------------

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
