"""The hand's record: what a hand in play needs to come back after a power
cut (docs/reliability.md, The hand's record), made for the flash from what
the follower noted in the tick (`HandFollower.rec`: a header, then one
entry of 3 bytes per reserve change or irregular take, op | concealed << 3
| (seat + 1, 0: none) << 4, the reserve after or a take's slot, the head
position after, 255: none).

The controller writes it (hand.rec, sealed with the table's key:
firmware/sealed.py, whole and atomic; controller/saved_state.py, between
ticks) when the dice
settle, when the gold is turned up and at every reserve change. What a
cut must not change (the dice, so the break; the gold's roll; the
dealer) is written before any channel shows it: the dice are shown on
the tick after they settle (controller/table.py), the record between.

    {"v": 3, "n": 12, "ruleset": "fuzhou144", "dealer": 2, "wins_in_row": 1,
     "dice": [3, 5], "gold": "5m", "gold_dice": null, "reserve": 17,
     "changes": [["kong", 1, 1, 17]], "heads": [80],
     "takes": [["take", 37, 82, 1]], "full": 0, "tiles": "0a1b..."}

`gold_dice`: the gold roll's faces (rulesets that find the gold by the
dice), null before it; `heads`: the head position after each change (-1: none left); `takes`:
the irregular takes and tiles put back, [op, slot, head after, changes
before it]; `full`: 1 when an entry did not fit the follower's buffer;
`tiles`: the walls' tile ids by slot, two hex digits each.

The boot reads it back through controller/record_check.py.
"""

from binascii import hexlify

from firmware.controller.follower import (REC_A, REC_B, REC_FULL, REC_GOLD_A, REC_GOLD_B,
                                         REC_HEAD, REC_N)
from firmware.controller.hand_events import OPS


def make(follower, n, wins_in_row):
    """The hand's record as saved (hand.rec, its JSON sealed), from the follower's `rec`:
    `n` the hand's number (the hands counted before it + 1), `wins_in_row`
    the dealer's streak it began with. Between ticks only: it allocates.

    `tiles` is the walls' tile ids by slot as the audit found them (two hex
    digits each): kept on the controller's own flash, sealed, which nothing
    on the link reads, so that a resume knows the tiles gone while it was
    off (docs/reliability.md, Resuming a hand); erased at the hand's end."""
    rec = follower.rec
    hand = follower.hand
    changes = []
    heads = []
    takes = []
    for i in range(rec[REC_N]):
        at = REC_HEAD + 3 * i
        b = rec[at]
        op = OPS[b & 7]
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
    return {"v": 3, "n": n, "ruleset": hand.rules.name, "dealer": hand.dealer,
            "wins_in_row": wins_in_row, "dice": [rec[REC_A], rec[REC_B]],
            "gold": hand.gold_code,
            "gold_dice": [rec[REC_GOLD_A], rec[REC_GOLD_B]] if rec[REC_GOLD_A] else None, "reserve": hand.reserve,
            "changes": changes, "heads": heads, "takes": takes, "full": rec[REC_FULL],
            "tiles": hexlify(ids).decode()}  # pyright: ignore[reportArgumentType]  (any buffer)
