"""The table view in the middle of a hand (host_tools/view/tableview/):
the stacks left in the walls in play, the hand's panel with the gold, its
counts and the walls' ends lit, and the final group highlighted. No
firmware: virtual players play the hand and the view is told of each
event as the link would tell it."""

import io
import random
import re
import types

import pytest

from engine_core.replay import PUBLIC_KEYS, STACK_KEYS, replay
from host_tools.sim import VirtualTable
from host_tools.sim.hand_players import HandPlayers
from host_tools.view import tableview
from host_tools.view.tableview import Demo


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
