"""Watch one seeded random hand played out on the walls (the `make run` demo).

    python -m host_tools.view.wallview [--seed N] [--ruleset NAME] [--delay S] [--plain]

A stand-in until the virtual table exists. The walls are drawn as a square
seen from above (docs/rules.md §3): seat 0 at the bottom, 1 right, 2 top, 3 left,
each wall's stack 0 at the right end as its player sees it, walls joining
clockwise. A stack shows how many tiles it still holds; which tiles they are
stays hidden. Only public facts are printed: the gold once revealed and the
flowers set aside.

On a terminal the hand runs in a rich Live view; with --plain, or when stdout
is not a terminal, one plain line per event and then the final walls.
"""

import argparse
import os
import sys
import time

from engine_core import tiles
from engine_core.hand import Hand
from engine_core.replay import apply, state
from engine_core.rulesets import load, names
from engine_core.wall import GOLD, IRREGULAR
from host_tools.sim.hand_script import random_hand

GLYPH = {2: "2", 1: "1", 0: "."}
FLAG = {"head": "H", "tail": "T", "marker": "M", "irregular": "x", "gold": "g"}
LEGEND = ("2 1 . tiles left in a stack   H head  T tail  M marker (gold shown)"
          "   x gap: irregular take  g gap: gold   | ---- the break")
ORIENTATION = ("seen from above: seat 0 bottom, 1 right, 2 top, 3 left;"
               " stack 0 at each seat's right end")
CELL = 4                             # break mark, count glyph, two flags
STYLE = {"n2": "bold white", "n1": "grey62", "n0": "grey35", "break": "bold cyan",
         "head": "bold black on green3", "tail": "bold white on red3",
         "marker": "bold black on yellow", "irregular": "bold magenta",
         "gold": "bold yellow", "label": "italic cyan", "": ""}


# -- the picture: a model of segments, drawn plain or with rich -------------

def _where(S, seat, k):
    """(row, col) of stack k of `seat` in the (S+1) x (S+1) grid, row 0 on top.
    A pinwheel: each corner holds the right end (stack 0) of one wall."""
    return ((S, S - k), (k, S), (0, k), (S - k, 0))[seat]


def _roles(hand, i, head, tail, marker):
    """Up to two flags for draw-order stack i, most important first."""
    a, b = hand.wall.how[2 * i], hand.wall.how[2 * i + 1]
    roles = [r for r, on in (("head", i == head), ("tail", i == tail), ("marker", i == marker),
                             ("irregular", IRREGULAR in (a, b)), ("gold", GOLD in (a, b))) if on]
    return roles[:2]


def wall_rows(hand, labels=None):
    """Rows of (text, kind) segments; `labels`: {grid row: interior text}.
    A stack is CELL characters: break mark, count glyph, two flags."""
    wall = hand.wall
    geo = wall.geo
    S = geo.stacks
    head = wall.head_pos()
    head = head >> 1 if head >= 0 else -1
    tail, marker = wall.tail_stack(), hand.marker_stack()
    blank = [(" " * CELL, "")]
    grid = [[list(blank) for _c in range(S + 1)] for _r in range(S + 1)]
    for i in range(geo.n_stacks):
        seat, k = geo.stack_at(i)
        n = (not wall.how[2 * i]) + (not wall.how[2 * i + 1])
        roles = _roles(hand, i, head, tail, marker)
        main = roles[0] if roles and roles[0] in ("head", "tail", "marker") else "n%d" % n
        r, c = _where(S, seat, k)
        grid[r][c] = [(" ", ""), (GLYPH[n], main)] + [(FLAG[x], x) for x in roles]
        grid[r][c].append((" " * (2 - len(roles)), ""))
    # The break lies between stacks d-1 and d of the chosen seat c (§4).
    c, d = geo.seat, geo.skip
    after = None                     # grid row followed by a break row
    if c in (0, 2):                  # horizontal wall: a mark between two cells
        r, col = _where(S, c, d - 1 if c == 0 else d)
        grid[r][col][0] = ("|", "break")
    else:
        after = d - 1 if c == 1 else S - d
    width = CELL * (S - 1)
    rows = []
    for r in range(S + 1):
        if 0 < r < S:
            text = (labels or {}).get(r, "")
            row = grid[r][0] + [(text.center(width)[:width], "label")] + grid[r][S]
        else:
            row = [seg for cell in grid[r] for seg in cell]
        rows.append(row)
        if r == after:
            mark, gap = [("-" * CELL, "break")], [(" " * width, "")]
            rows.append(blank + gap + mark if c == 1 else mark + gap + blank)
    return rows


def render_walls(hand):
    """The walls as plain text rows (no labels, no colour): for --plain and tests."""
    return ["".join(t for t, _k in row).rstrip() for row in wall_rows(hand)]


def _labels(hand, st):
    S = hand.wall.geo.stacks
    name = ["seat %d" % s + (" (dealer)" if s == hand.dealer else "") for s in range(4)]
    mid = CELL * (S - 1) - 2
    labels = {1: name[2], S - 1: name[0],
              S // 2: " " + name[3].ljust(mid // 2) + name[1].rjust(mid - mid // 2) + " "}
    if st["gold"]:
        labels[S // 2 + 2] = "gold %s" % st["gold"]
    return labels


def render_rich(hand, view, width=120):
    """The rich renderable for one step: walls beside (or above) the status."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    pic = Text(no_wrap=True)
    for row in wall_rows(hand, _labels(hand, view["state"])):
        for text, kind in row:
            pic.append(text, STYLE[kind])
        pic.append("\n")
    legend = Text(LEGEND.replace("   ", "\n"), style="dim")
    walls = Panel(Group(pic, legend), title="walls seen from above", expand=False)
    status = Table.grid(padding=(0, 1))
    status.add_column(style="bold")
    status.add_column()
    for key, value in _facts(view):
        status.add_row(key, value)
    if view["banner"]:
        status.add_row("", "")
        status.add_row("", Text(view["banner"], style="bold black on yellow"))
    panel = Panel(status, title="status", expand=False)
    wide = CELL * (hand.wall.geo.stacks + 1) + 4
    if width < wide + 40:
        return Group(walls, panel)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(min_width=wide, no_wrap=True)
    grid.add_column()
    grid.add_row(walls, panel)
    return grid


# -- what the status says (shared by both modes) -----------------------------

def event_text(ev):
    op = ev["op"]
    if op == "draw":
        return "draw seat %d" % ev["seat"]
    if op == "kong":
        return "kong seat %d %s" % (ev["seat"], ev["kind"])
    if op == "take":
        return "take slot %d" % ev["slot"]
    if op == "reveal_gold" and "dice" in ev:
        return "reveal_gold dice %d+%d" % tuple(ev["dice"])
    return op


def _at(p):
    return "-" if p is None else "%d/%d" % (p["seat"], p["stack"])


def _facts(view):
    st, scn = view["state"], view["scenario"]
    a, b = scn["dice"]
    seats = [("seat %d" % s, "%d tiles, flowers %s" % (st["hand_sizes"][s], " ".join(st["flowers"][s]) or "-"))
             for s in range(4)]
    return [
        ("hand", "seed %s, %s" % (view["seed"], scn["ruleset"])),
        ("event", "%d/%d %s" % (view["n"], len(scn["events"]), event_text(view["event"]))),
        ("phase", st["phase"]),
        ("wall", "W %d  R %d  D %d" % (st["wall"], st["reserve"], st["drawable"])),
        ("gold", st["gold"] or "-"),
        ("dealer", "seat %d, dice %d+%d" % (scn["dealer"], a, b)),
        ("head", _at(st["head"]) + "  (seat/stack)"),
        ("tail", _at(st["tail"])),
        ("marker", _at(st["marker"])),
    ] + seats + [("irregular", str(st["irregular"]))]


def plain_line(view):
    """One line per event, the same facts as the status panel."""
    st, scn = view["state"], view["scenario"]
    line = ("#%d/%d %s | phase %s | W %d R %d D %d | gold %s | dealer %d dice %d+%d"
            " | head %s tail %s marker %s | hands %s | flowers %s | irregular %d"
            % (view["n"], len(scn["events"]), event_text(view["event"]), st["phase"],
               st["wall"], st["reserve"], st["drawable"], st["gold"] or "-", scn["dealer"],
               scn["dice"][0], scn["dice"][1], _at(st["head"]), _at(st["tail"]),
               _at(st["marker"]), " ".join(str(n) for n in st["hand_sizes"]),
               " ".join("%d:%s" % (s, ",".join(f) or "-") for s, f in enumerate(st["flowers"])),
               st["irregular"]))
    return line + ("  ** %s **" % view["note"] if view["note"] else "")


# -- stepping ----------------------------------------------------------------

def steps(scenario, seed=None):
    """Replay a scenario on a fresh Hand; yield (hand, view) after each event."""
    rules = load(scenario["ruleset"])
    a, b = scenario["dice"]
    hand = Hand(rules, scenario["dealer"], a + b,
                bytearray(tiles.tile_id(c) for c in scenario["tiles"]))
    banner = ""
    for n, ev in enumerate(scenario["events"], 1):
        phase, drawable = hand.phase_name, hand.drawable
        apply(hand, ev)
        st = state(hand)
        note = ""
        if st["phase"] == "final" and phase != "final":
            note = banner = ("final group (最后一组) starts: %d tiles, one head tile per seat,"
                             " no flower replacement" % drawable)
        elif st["phase"] == "draw" and phase != "draw":
            note = banner = "the hand ends as a draw (和局)"
        yield hand, {"seed": seed, "scenario": scenario, "n": n, "event": ev,
                     "state": st, "note": note, "banner": banner}


def run_plain(scenario, seed, out, delay=0.0):
    hand = None
    for hand, view in steps(scenario, seed):
        out.write(plain_line(view) + "\n")
        out.flush()
        if delay:
            time.sleep(delay)
    out.write("\nfinal walls, %s\n%s\n" % (ORIENTATION, LEGEND))
    for row in render_walls(hand):
        out.write(row + "\n")


def run_live(scenario, seed, delay):
    from rich.console import Console
    from rich.live import Live

    with Live(console=Console(), auto_refresh=False) as live:
        for hand, view in steps(scenario, seed):
            live.update(render_rich(hand, view, live.console.width), refresh=True)
            if delay:
                time.sleep(delay)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.view.wallview", description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=None, help="hand seed (default: random)")
    ap.add_argument("--ruleset", default=names()[0], choices=names())
    ap.add_argument("--delay", type=float, default=None,
                    help="seconds between events (default 0.25 on a terminal, 0 plain)")
    ap.add_argument("--plain", action="store_true", help="plain text, one line per event")
    args = ap.parse_args(argv)
    plain = args.plain or not sys.stdout.isatty()
    delay = args.delay if args.delay is not None else (0.0 if plain else 0.25)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    try:
        scenario, _hand = random_hand(seed, args.ruleset)
        if plain:
            run_plain(scenario, seed, sys.stdout, max(delay, 0.0))
        else:
            run_live(scenario, seed, max(delay, 0.0))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:          # e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
