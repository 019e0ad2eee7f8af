"""The `make run` wall viewer: plain output, the wall picture, no leaks."""

import io
import re

import pytest

from engine_core import tiles
from engine_core.hand import Hand
from engine_core.replay import replay
from engine_core.rulesets import load
from host_tools.view import wallview
from host_tools.sim.hand_script import random_hand

SUIT_CODE = re.compile(r"(?<![0-9A-Za-z])[1-9][mps](?![0-9A-Za-z])")
AT = re.compile(r"\| head (\S+) tail (\S+) marker (\S+) \|")


def _fresh(ruleset, dealer=0, dice_sum=7):
    rules = load(ruleset)
    codes = rules.tile_codes()
    return Hand(rules, dealer, dice_sum, bytearray(tiles.tile_id(c) for c in codes))


def _cells(rows, S):
    """{(seat, k): 4-char cell}, located from the rules' words (docs/rules.md §3), not the module:
    seat 0 bottom row with stack 0 at the right end, seat 1 right column with
    stack 0 on top, seat 2 top row with stack 0 on the left, seat 3 left column
    with stack 0 at the bottom (each seat's right end as its player sees it)."""
    grid = [r.ljust(4 * (S + 1)) for r in rows if set(r.strip()) != {"-"}]
    assert len(grid) == S + 1
    where = {0: lambda k: (S, S - k), 1: lambda k: (k, S),
             2: lambda k: (0, k), 3: lambda k: (S - k, 0)}
    out = {}
    for seat in range(4):
        for k in range(S):
            r, c = where[seat](k)
            out[seat, k] = grid[r][4 * c:4 * c + 4]
    return out


def _check_picture(hand, rows, st):
    """Every stack's glyph and flags agree with the engine, seat by seat."""
    S = hand.rules.stacks
    cells = _cells(rows, S)
    assert len(set(cells)) == 4 * S
    geo, how = hand.wall.geo, hand.wall.how
    for (seat, k), cell in cells.items():
        slot = (seat * S + k) * 2
        n = sum(not how[geo.pos_of_slot[slot + layer]] for layer in (0, 1))
        assert cell[1] == {2: "2", 1: "1", 0: "."}[n], (seat, k, cell)
    for key, flag in (("head", "H"), ("tail", "T"), ("marker", "M")):
        if st[key] is not None:
            assert flag in cells[st[key]["seat"], st[key]["stack"]][2:], (key, st[key])
        assert sum(c[2:].count(flag) for c in cells.values()) == (st[key] is not None)
    return cells


def _tiles_in(rows):
    return sum(r.count("2") * 2 + r.count("1") for r in rows)


@pytest.mark.parametrize("seed", [1, 2, 11])
def test_plain_mode_follows_the_engine(seed, capsys):
    assert wallview.main(["--seed", str(seed), "--plain"]) == 0
    out = capsys.readouterr().out
    scenario, hand = random_hand(seed)
    states = replay(scenario)
    lines, _sep, tail = out.partition("\n\n")
    lines = lines.split("\n")
    assert len(lines) == len(scenario["events"]) == len(states)
    assert "ends as a draw" in lines[-1] and "phase draw" in lines[-1]
    assert sum("final group" in ln for ln in lines) <= 1
    for line, st in zip(lines, states):
        pos = ["%d/%d" % (p["seat"], p["stack"]) if p else "-"
               for p in (st["head"], st["tail"], st["marker"])]
        assert list(AT.search(line).groups()) == pos
        assert "W %d R %d D %d" % (st["wall"], st["reserve"], st["drawable"]) in line
        assert "phase %s" % st["phase"] in line
    walls = wallview.render_walls(hand)
    assert tail.rstrip("\n").split("\n")[-len(walls):] == walls
    assert _tiles_in(walls) == states[-1]["wall"] == hand.wall.count
    _check_picture(hand, walls, states[-1])
    gold = states[-1]["gold"]
    assert gold and set(SUIT_CODE.findall(out)) == {gold}


def test_each_stack_flags_gaps_and_the_engine_state_at_every_step():
    scenario, _hand = random_hand(5, "luoyuan144", kong_rate=0.05, take_rate=0.05)
    assert any(ev["op"] == "take" for ev in scenario["events"])
    for hand, view in wallview.steps(scenario):
        rows = wallview.render_walls(hand)
        assert _tiles_in(rows) == view["state"]["wall"]
        _check_picture(hand, rows, view["state"])
    assert any("x" in r for r in rows) and any("g" in r for r in rows)


@pytest.mark.parametrize("ruleset, total", [("fuzhou144", 144), ("luoyuan128", 128)])
def test_fresh_walls_hold_every_tile(ruleset, total):
    hand = _fresh(ruleset)
    rows = wallview.render_walls(hand)
    assert _tiles_in(rows) == total
    S = hand.rules.stacks
    assert "".join(rows).count("2") == 4 * S and "1" not in "".join(rows)


@pytest.mark.parametrize("dealer", range(4))
def test_break_sits_between_head_and_tail_on_every_wall(dealer):
    d = 7
    c = (dealer + d - 1) % 4                # the dealer counts as 1 (§4)
    hand = _fresh("fuzhou144", dealer, d)
    S = hand.rules.stacks
    rows = wallview.render_walls(hand)
    cells = _check_picture(hand, rows, {"head": {"seat": c, "stack": d},
                                        "tail": {"seat": c, "stack": d - 1},
                                        "marker": {"seat": (c + 1) % 4, "stack": S - 2}})
    assert cells[c, d][2] == "H" and cells[c, d - 1][2] == "T"
    if c in (0, 2):                         # a mark between the two cells
        assert (cells[c, d - 1] if c == 0 else cells[c, d])[0] == "|"
        assert not any(set(r.strip()) == {"-"} for r in rows)
    else:                                   # a line between the two rows
        i = [n for n, r in enumerate(rows) if set(r.strip()) == {"-"}]
        assert len(i) == 1 and "|" not in "".join(rows)
        above = d - 1 if c == 1 else S - d     # grid row of the stack above it
        assert i[0] == above + 1
        assert rows[i[0]].startswith("-") == (c == 3)


def test_rich_view_renders_without_leaking_tiles():
    from rich.console import Console

    scenario, _hand = random_hand(4)
    for width in (120, 80):
        buf = io.StringIO()
        console = Console(file=buf, width=width, color_system=None)
        for hand, view in wallview.steps(scenario, seed=4):
            if view["n"] in (1, 3, len(scenario["events"])):
                console.print(wallview.render_rich(hand, view, width))
        text = buf.getvalue()
        assert "ends as a draw" in text and "seat 0" in text
        assert set(SUIT_CODE.findall(text)) == {view["state"]["gold"]}


def test_every_named_ruleset_is_a_choice(capsys):
    """--ruleset took the characters of the rulesets' table as its choices."""
    for name in ("fuzhou144", "luoyuan144", "luoyuan128"):
        assert wallview.main(["--seed", "3", "--plain", "--ruleset", name]) == 0
