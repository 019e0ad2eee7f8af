"""The replay tool of docs/rules.md §13: scenarios in, public states out.

    python -m engine_core.replay      < scenarios.jsonl
    micropython -m engine_core.replay < scenarios.jsonl

One JSON object per input line; one JSON array per line out (or an
`{"error": ...}` object for a malformed line). Blank lines are skipped; keys
§13 does not name (a scenario's "name", say) are ignored. A tile
set whose codes are valid but whose multiset is not the ruleset's is replayed
as it is, and the difference is reported on stderr (§11: report, go on,
never correct).
"""

import json
import sys

from engine_core import tiles
from engine_core.tiles import is_int
from engine_core.hand import Hand, Refused
from engine_core.rulesets import load

KEYS = ("ruleset", "dealer", "dice", "tiles", "events")


class Malformed(Exception):
    pass


def check_dice(dice):
    """(a, b) from a two-dice roll; ValueError names what is wrong. Here
    rather than in dice.py: only scenarios bring dice as data, and on the
    controller every resident function costs heap."""
    if not isinstance(dice, (list, tuple)) or len(dice) != 2:
        raise ValueError("dice must be two values 1..6, not %r" % (dice,))
    for v in dice:
        if not is_int(v, 1, 6):
            raise ValueError("each die must be 1..6, not %r" % (v,))
    return dice[0], dice[1]


def build(scn):
    """A fresh Hand for a parsed scenario object; Malformed says why not."""
    if not isinstance(scn, dict):
        raise Malformed("a scenario must be a JSON object")
    for key in KEYS[1:]:
        if key not in scn:
            raise Malformed("missing key %r" % key)
    try:
        rules = load(scn.get("ruleset"))   # absent: the default, fuzhou144
    except ValueError as e:        # the ruleset's: it names what is wrong
        raise Malformed(str(e))
    if not is_int(scn["dealer"], 0, 3):
        raise Malformed("dealer must be a seat 0..3, not %r" % (scn["dealer"],))
    try:
        a, b = check_dice(scn["dice"])
    except ValueError as e:
        raise Malformed(str(e))
    codes = scn["tiles"]
    if not isinstance(codes, list) or len(codes) != rules.n_tiles:
        raise Malformed("tiles must be a list of %d codes (%s)" % (rules.n_tiles, rules.name))
    ids = bytearray(len(codes))
    for slot in range(len(codes)):
        try:
            ids[slot] = tiles.tile_id(codes[slot])
        except ValueError as e:
            raise Malformed("slot %d: %s" % (slot, e))
    if not isinstance(scn["events"], list):
        raise Malformed("events must be a list")
    return Hand(rules, scn["dealer"], a + b, ids)


def set_differences(rules, ids):
    """Lines describing how a wall's multiset differs from the ruleset's."""
    out = []
    for code, have, want, slots in rules.audit(ids):
        line = "%s: %d on the table, %d in %s" % (code, have, want, rules.name)
        out.append(line + (", at slots %s" % slots if slots else ""))
    return out


def apply(hand, ev):
    """Apply one event object; raises Refused with the reason."""
    if not isinstance(ev, dict) or not isinstance(ev.get("op"), str):
        raise Refused("an event must be an object with an \"op\"")
    op = ev["op"]
    if op == "deal":
        hand.deal()
    elif op == "replace_flowers":
        hand.replace_flowers()
    elif op == "reveal_gold":
        dice_sum = 0
        if "dice" in ev:
            try:
                a, b = check_dice(ev["dice"])
            except ValueError as e:
                raise Refused("reveal_gold: %s" % e)
            dice_sum = a + b
        hand.reveal_gold(dice_sum)
    elif op == "draw":
        hand.draw(ev.get("seat"))
    elif op == "kong":
        kind = ev.get("kind")
        if kind != "exposed" and kind != "concealed":
            raise Refused("kong: kind must be \"exposed\" or \"concealed\", not %r" % (kind,))
        hand.kong(ev.get("seat"), kind == "concealed")
    elif op == "take":
        hand.take(ev.get("slot"))
    else:
        raise Refused("unknown op %r" % (op,))


def _stack(geo, i):
    return None if i < 0 else {"seat": geo.seat_of(i), "stack": geo.stack_of(i)}


def state(hand):
    """The public state after an event, as §13 names it."""
    wall = hand.wall
    geo = wall.geo
    head = wall.head_pos()
    return {
        "phase": hand.phase_name,
        "wall": wall.count,
        "reserve": hand.reserve,
        "drawable": hand.drawable,
        "gold": hand.gold_code,
        "marker": _stack(geo, hand.marker_stack()),
        "head": _stack(geo, head >> 1 if head >= 0 else -1),
        "tail": _stack(geo, wall.tail_stack()),
        "hand_sizes": [hand.hand_size(s) for s in range(4)],
        "flowers": [hand.flower_codes(s) for s in range(4)],
        "irregular": hand.irregular,
    }


# The part of state() the controller publishes in its `hand` events and its
# answer to the `hand` request (docs/protocol.md), by the same names; on the
# link a stack is the list [seat, k]. from_wire turns one back into state()'s
# form, which is how a host compares what the table saw with a replay.
PUBLIC_KEYS = ("phase", "wall", "reserve", "drawable", "gold", "marker", "head", "tail")
STACK_KEYS = ("marker", "head", "tail")


def from_wire(ev):
    """The PUBLIC_KEYS of a `hand` event (or answer) as state() has them."""
    out = {}
    for key in PUBLIC_KEYS:
        v = ev[key]
        if key in STACK_KEYS and v is not None:
            v = {"seat": v[0], "stack": v[1]}
        out[key] = v
    return out


def replay(scn, warn=None):
    """States for one parsed scenario, or {"error": ...} if it is malformed.
    `warn(text)` receives tile-set differences (default: ignored)."""
    try:
        hand = build(scn)
    except Malformed as e:
        return {"error": str(e)}
    if warn is not None:
        ids = bytearray(tiles.tile_id(c) for c in scn["tiles"])
        for line in set_differences(hand.rules, ids):
            warn(line)
    out = []
    for ev in scn["events"]:
        try:
            apply(hand, ev)
            out.append(state(hand))
        except Refused as e:
            st = state(hand)
            st["error"] = str(e)
            out.append(st)
    return out


def main():
    n = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        n += 1
        if not line.strip():
            continue

        def warn(text):
            sys.stderr.write("line %d: tile set differs: %s\n" % (n, text))

        try:
            scn = json.loads(line)
        except ValueError as e:
            result = {"error": "line %d is not JSON: %s" % (n, e)}
        else:
            result = replay(scn, warn)
        sys.stdout.write(json.dumps(result))
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
