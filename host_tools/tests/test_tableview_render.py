"""The table view's snapshot of a virtual table and what it draws of it
(host_tools/view/tableview/): the panels at 80 and 120 columns, the plain
lines, and the demo keeping a hand to its result. No firmware: the table
is driven by hand."""

import io
import re
import types

import pytest

from host_tools.sim import VirtualTable
from host_tools.tests.tableview_helpers import _full_view
from host_tools.view import tableview
from host_tools.view.tableview import Demo


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
