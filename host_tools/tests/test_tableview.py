"""`make run`: the table view (host_tools/view/tableview/) and the bus's speed factor.

The runs are real: the firmware under the MicroPython unix port on the
virtual table, in real-time mode at a speed the two processes cannot reach
(200x: they run as fast as they can, about 2 s a run).
"""

import io
import os
import random
import re
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import tty
import types

import pytest
import serial

from host_tools.texts import faults as fault_table
from firmware.frame import FrameReader, encode
from engine_core.replay import PUBLIC_KEYS, STACK_KEYS, replay
from host_tools.view import tableview
from host_tools.view.tableview import Demo
from host_tools.cli.ops import describe_fault
from host_tools.image.mpenv import ROOT
from host_tools.sim import BusServer, VirtualTable
from host_tools.sim.hand_players import HandPlayers

FAST = ["--speed", "200"]
LINE = re.compile(r"^\s*(\d+\.\d{3})  (> )?(\S+)\s*(.*)$")


def run_view(*args, timeout=60):
    """The view as `make run` starts it, stdout a pipe (so: plain lines)."""
    p = subprocess.run([sys.executable, "-m", "host_tools.view.tableview"] + FAST + list(args),
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

@pytest.fixture(scope="module")
def two_cycles():
    """One run for the tests below: two cycles, the whole hand between them."""
    p = run_view("--cycles", "2")
    assert p.returncode == 0, p.stderr
    return p


def hand_lines(entries):
    """The `hand` events' fields as dicts (values as printed)."""
    out = []
    for t, _, name, f in entries:
        if name == "hand":
            fields = dict(kv.split("=", 1) for kv in f.split())
            fields["t"] = t
            out.append(fields)
    return out


def test_plain_mode_plays_two_cycles_in_order(two_cycles):
    p = two_cycles
    assert "\x1b[" not in p.stdout                       # no ANSI without a terminal
    entries = parse(p.stdout)
    names = link_names(entries)
    # the second set's walls come during the hand (the test below)
    assert in_order(names, ["building"] + CYCLE + ["hand", "result"] + CYCLE[1:]), names
    assert names.count("dice") == 2 and names.count("result") == 1 and "fault" not in names
    hosts = [n for _, who, n, _ in entries if who == "host"]
    assert hosts == ["start"]                           # the players end the hand, not the host
    assert p.stdout.splitlines()[-1].startswith("# stopped after 2 cycles")


def test_plain_mode_shows_a_whole_hand(two_cycles):
    entries = parse(two_cycles.stdout)
    hands = hand_lines(entries)
    ops = [h["op"] for h in hands]
    assert ops[:3] == ["deal", "replace_flowers", "reveal_gold"], ops
    assert ops.count("draw") >= 4, ops
    assert [int(h["n"]) for h in hands] == list(range(len(hands)))
    assert hands[0]["gold"] == hands[1]["gold"] == "null"
    gold = hands[2]["gold"]
    assert re.fullmatch(r"[1-9][mpsz]", gold), gold      # turned up, then kept all hand
    assert all(h["gold"] == gold for h in hands[2:])
    for a, b in zip(hands, hands[1:]):                 # only a put back returns a tile
        assert int(b["wall"]) <= int(a["wall"]) or b["op"] == "put_back", (a, b)
    assert int(hands[-1]["wall"]) < int(hands[0]["wall"])
    assert all("seat" in h for h in hands if h["op"] in ("draw", "kong"))
    # the result after the last hand event, then the next cycle by itself
    t_res, _, _, res = next(e for e in entries if e[2] == "result")
    assert hands[-1]["t"] <= t_res
    winner = re.search(r"\bwinner=(\S+)", res).group(1)
    assert (winner == "null") == (hands[-1]["phase"] == "draw"), (winner, hands[-1])
    dealer = re.search(r"\bdealer=(\d)", res).group(1)
    lines = two_cycles.stdout.splitlines()
    assert any(re.match(r"# hand 1: (a draw|seat %s won); next dealer seat %s, streak \d+$"
                        % (winner, dealer), line) for line in lines), lines
    after = [e for e in entries if e[0] >= t_res and e[2] != "lane"]
    assert link_names(after)[:5] == ["result", "lifting", "dealer", "rolling", "dice"]
    dice = next(f for _, _, n, f in after if n == "dice")
    assert dice.endswith("dealer=%s" % dealer)           # the dealer the result named


def test_the_next_set_built_during_the_hand_lifts_at_its_result(two_cycles):
    entries = parse(two_cycles.stdout)
    t_res = next(t for t, _, n, _ in entries if n == "result")
    nexts = [t for t, _, n, f in entries if n == "walls" and "next=True" in f]
    assert nexts and nexts[0] < t_res                     # built during the hand
    lifting = [t for t, _, n, f in entries if "state=lifting" in f.split()]
    assert lifting[-1] == t_res                           # lifted at once
    cycles = re.findall(r"^# cycle 2: .*table time ([\d.]+) s", two_cycles.stdout, re.M)
    assert cycles and float(cycles[0]) < 10.0             # lift, dealer, dice: no build


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
    p = subprocess.Popen([sys.executable, "-m", "host_tools.view.tableview"] + FAST,
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
    view.result = {"winner": 2, "dealer": 3, "wins_in_row": 0, "streak": 0, "t": 4000}
    view.hands = 1
    view.fault = dict(describe_fault({"code": 10, "t": 6100, "detail": {"lane": 1, "count": 0}}),
                      active=True, cleared_t=None, resume=None)
    view.fix_at = 20000
    for i, (name, fields) in enumerate([("state", {"state": "building"}),
                                        ("walls", {"tiles_per_side": [36, 36, 36, 36]}),
                                        ("fault", {"code": 10, "detail": {"lane": 1},
                                                   "name": "lane_jam"})]):
        view.record(1000 * i, name, fields)
    view.record(4000, "result", {"dealer": 3, "streak": 0, "winner": 2, "wins_in_row": 0})
    view.record(5000, "start", {}, host=True)
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
    assert "33.10 s table time" in text and "> start" in text
    assert "seat 2 won → dealer 3, streak 0" in text and "1 ended, 1 won, 0 drawn" in text


def test_plain_lines_of_events_and_faults():
    entry = {"t": 32610, "name": "dice", "fields": {"a": 3, "b": 2, "dealer": 0}, "host": False}
    assert tableview.plain_lines(entry) == ["    32.610  dice       a=3 b=2 dealer=0"]
    entry = {"t": 41980, "name": "clear", "fields": {}, "host": True}
    assert tableview.plain_lines(entry) == ["    41.980  > clear"]
    entry = {"t": 90670, "name": "result", "host": False,
             "fields": {"dealer": 0, "streak": 0, "winner": None, "wins_in_row": 0}}
    assert tableview.plain_lines(entry) == [
        "    90.670  result     dealer=0 streak=0 winner=null wins_in_row=0"]
    entry = {"t": 6100, "name": "fault", "fields": {"code": 10}, "host": False}
    lines = tableview.plain_lines(entry, (("cause", "c c"), ("fix", "f f")))
    assert lines[1:] == ["            cause: c c", "            fix:   f f"]


def test_the_demo_keeps_a_hand_to_its_result_and_drops_it_with_new_walls():
    tv = VirtualTable(1)
    view = tableview.ViewState()
    lines = []
    demo = Demo(types.SimpleNamespace(table=tv, restarts=0), None, view,
                echo=lambda entry, extra: lines.extend(tableview.plain_lines(entry, extra)))
    demo.on_event({"ev": "hand", "t": 44260, "n": 0, "op": "deal", "phase": "dealt", "wall": 79,
                   "reserve": 18, "drawable": 61, "gold": None, "marker": [2, 16],
                   "head": [3, 3], "tail": [1, 6]})
    demo.on_event({"ev": "irregular", "t": 45000, "slot": 40, "reason": "back"})
    demo.on_event({"ev": "dice", "t": 46000, "a": 2, "b": 6, "dealer": 3, "gold": True})
    demo.on_event({"ev": "result", "t": 90670, "winner": None, "dealer": 3, "wins_in_row": 0,
                   "streak": 1})
    demo.on_event({"ev": "state", "t": 90670, "state": "lifting"})
    assert lines == [
        "    44.260  hand       drawable=61 gold=null head=[3,3] marker=[2,16] n=0 op=deal"
        " phase=dealt reserve=18 tail=[1,6] wall=79",
        "    45.000  irregular  reason=back slot=40",
        "    46.000  dice       a=2 b=6 dealer=3 gold=True",
        "    90.670  result     dealer=3 streak=1 winner=null wins_in_row=0",
        "# hand 1: a draw; next dealer seat 3, streak 1",
        "    90.670  state      state=lifting"]
    # the old walls stay on the table while the next set lifts: so does the hand
    assert view.hand["op"] == "deal" and view.hand["head"] == [3, 3]
    assert [e["op"] for e in view.hand_events] == ["deal", "irregular", "gold dice"]
    assert view.cycles == 0                              # the gold's roll is no new cycle
    assert view.result["dealer"] == 3 and (view.hands, view.draws) == (1, 1)
    assert view.cycle_start == 90670                     # the next cycle starts at the result
    demo.on_event({"ev": "state", "t": 93170, "state": "dealer"})   # new walls up
    assert view.hand is None and not view.hand_events and view.result["streak"] == 1


# -- the hand in play: a snapshot mid-hand ---------------------------------------

MID = 12        # the players have played the events 0..MID


def _hand_event(n, ev, st):
    """The `hand` event the firmware sends after `ev`: the public state `st`
    (engine_core.replay) as docs/protocol.md names it."""
    out = {"ev": "hand", "n": n, "op": ev["op"]}
    for key in PUBLIC_KEYS:
        v = st[key]
        out[key] = [v["seat"], v["stack"]] if key in STACK_KEYS and v else v
    out.update({k: ev[k] for k in ("seat", "kind", "slot") if k in ev})
    return out


@pytest.fixture(scope="module")
def mid_hand():
    """(table, view, public state) in the middle of a hand, no firmware: the
    second set laid out as the walls in play, virtual players told the
    dealer and dice play events 0..MID, and the view told of each event as
    the link would tell it (through Demo.on_event)."""
    tv = VirtualTable(5)
    tiles_ = list(tv.pile)
    random.Random(5).shuffle(tiles_)
    for slot, tile in enumerate(tiles_):
        tv.top_walls[slot // (2 * tv.stacks)][slot] = tile
    tv.pile = []
    hp = HandPlayers(tv, seed=5, win_rate=0, kong_rate=0, take_rate=0, dealer=1, dice=[3, 4])
    hp.start(tv.now)
    scn = hp.scenario
    tv.advance_to(max(t for t, i, _, _ in hp.timeline if i == MID))
    states = replay(scn)
    view = tableview.ViewState(seed=5, speed=5.0, code="test")
    demo = Demo(types.SimpleNamespace(table=tv, restarts=0), None, view)
    for n in range(MID + 1):
        demo.on_event(dict(_hand_event(n, scn["events"][n], states[n]), t=tv.now))
    st = states[MID]
    assert st["phase"] == "play" and scn["events"][MID]["op"] == "draw"
    return tv, view, st


def _cells(renderable, width):
    """The rendered lines as (text, [style of each cell])."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, force_terminal=True,
                      color_system="truecolor")
    out = []
    for line in console.render_lines(renderable, console.options, pad=False):
        chars = [(ch, seg.style) for seg in line for ch in seg.text]
        out.append(("".join(c for c, _ in chars), [st for _, st in chars]))
    return out


def _bg(style):
    return style.bgcolor.name if style is not None and style.bgcolor else None


def test_the_snapshot_counts_the_stacks_left_in_the_walls_in_play(mid_hand):
    tv, view, st = mid_hand
    snap = tableview.snapshot(tv, view)
    for side in range(4):
        want = [sum((2 * (side * tv.stacks + k) + layer) in tv.top_walls[side]
                    for layer in (0, 1)) for k in range(tv.stacks)]
        assert snap["walls"][side] == want
    assert sum(map(sum, snap["walls"])) == st["wall"]    # what the rules say is left
    assert 0 in snap["walls"][st["head"]["seat"]]        # the deal and draws ate a wall
    assert snap["hand"]["n"] == MID and snap["hand"]["gold"] == st["gold"]
    ops = [e["op"] for e in snap["hand_events"]]
    assert len(ops) == tableview.demo.HAND_EVENTS_SHOWN and ops[-1] == "draw"


@pytest.mark.parametrize("width", [80, 120])
def test_the_hand_panel_shows_gold_counts_and_the_walls(mid_hand, width):
    tv, view, st = mid_hand
    snap = tableview.snapshot(tv, view)
    lines = _cells(tableview.render(snap, width), width)
    text = "\n".join(t for t, _ in lines)
    assert len(lines) <= 45 and all(len(t) <= width for t, _ in lines)
    assert re.search(r"gold\s+%s\b" % st["gold"], text)
    assert "%d  reserve %d  drawable %d" % (st["wall"], st["reserve"], st["drawable"]) in text
    assert re.search(r"phase\s+PLAY\s+event %d\b" % MID, text)
    last = view.hand_events[-1]
    assert re.search(r"last\s+draw %d, draw %d" % (last["seat"], view.hand_events[-2]["seat"]),
                     text)
    rows = {}
    for t, styles in lines:
        m = re.search(r"│ (\d) ([·▄█]{18}) +(\d+) ", t)
        if m:
            rows[int(m.group(1))] = (m.group(2), styles[m.start(2):m.end(2)], int(m.group(3)))
    assert sorted(rows) == [0, 1, 2, 3]
    for side, (glyphs, _, n) in rows.items():
        assert glyphs == "".join("·▄█"[c] for c in snap["walls"][side])
        assert n == sum(snap["walls"][side])
    for key, colour in (("head", "green"), ("tail", "magenta"), ("marker", "yellow")):
        seat, stack = st[key]["seat"], st[key]["stack"]
        lit = [(s, k) for s, (_, styles, _) in rows.items()
               for k, style in enumerate(styles) if _bg(style) == colour]
        assert lit == [(seat, stack)], (key, lit)


def test_the_final_group_and_the_boards_count_are_highlighted(mid_hand):
    tv, view, st = mid_hand
    snap = tableview.snapshot(tv, view)
    snap["hand"]["phase"] = "final"
    snap["display"].update(count=(3, 2, 0), alert="final")
    lines = _cells(tableview.render(snap, 120), 120)
    text = "\n".join(t for t, _ in lines)
    assert "3 to draw, marker 2/0" in text
    for t, styles in lines:
        for m in re.finditer(r" (FINAL GROUP|FINAL) ", t):
            assert {_bg(s) for s in styles[m.start():m.end()]} == {"yellow"}
    assert re.search(r"phase\s+ FINAL GROUP ", text) and "marker 2/0   FINAL " in text


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
