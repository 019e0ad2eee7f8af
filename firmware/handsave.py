"""The hand's record made for the flash (hand.json; its format, and its
checker for the boot, in firmware/handrec.py), from what the follower
noted in the tick: its buffer `HandFollower.rec` (controller/follower.py).

controller/saved_state.py's `record` writes it between ticks
(`TableController.write`).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

# HandFollower.rec, as controller/follower.py fills it: a header, then one
# entry of 3 bytes per reserve change or irregular take (op | concealed <<
# 3 | (seat + 1, 0: none) << 4, the reserve after or a take's slot, the
# head position after, 255: none). The same numbers as the follower's
# _R_* and _OPS.
from binascii import hexlify

_OPS = const(("deal", "replace_flowers", "reveal_gold", "draw", "kong", "take", "put_back"))
_R_A = const(0)
_R_B = const(1)
_R_GOLD_DICE = const(2)
_R_N = const(3)
_R_FULL = const(5)
_R_HEAD = const(6)


def record(follower, n, wins_in_row):
    """The hand's record as saved (hand.json), from the follower's `rec`:
    `n` the hand's number (the hands counted before it + 1), `wins_in_row`
    the dealer's streak it began with. Between ticks only: it allocates.

    `tiles` is the walls' tile ids by slot as the audit found them (two hex
    digits each): kept on the controller's own flash, which nothing on the
    link reads, so that a resume knows the tiles gone while it was off
    (docs/reliability.md, Resuming a hand)."""
    rec = follower.rec
    hand = follower.hand
    changes = []
    heads = []
    takes = []
    for i in range(rec[_R_N]):
        at = _R_HEAD + 3 * i
        b = rec[at]
        op = _OPS[b & 7]
        head = rec[at + 2] if rec[at + 2] != 255 else -1
        if op == "take" or op == "put_back":
            takes.append([op, rec[at + 1], head, len(changes)])
            continue
        changes.append([op, (b >> 4) - 1 if b >> 4 else None, (b >> 3) & 1, rec[at + 1]])
        heads.append(head)
    wall = hand.wall
    slot_of = wall.geo.slot_of_pos
    ids = bytearray(len(wall.tile))
    for p in range(len(ids)):
        ids[slot_of[p]] = wall.tile[p]
    return {"v": 2, "n": n, "ruleset": hand.rules.name, "dealer": hand.dealer,
            "wins_in_row": wins_in_row, "dice": [rec[_R_A], rec[_R_B]],
            "gold": hand.gold_code,
            "gold_dice": rec[_R_GOLD_DICE] or None, "reserve": hand.reserve,
            "changes": changes, "heads": heads, "takes": takes, "full": rec[_R_FULL],
            "tiles": hexlify(ids).decode()}  # pyright: ignore[reportArgumentType]  (any buffer)
