"""Seeded random hands played by the rules, as §13 replay scenarios.

Stand-in players for demos, benchmarks and tests: they shuffle the ruleset's
tiles, roll, run the opening, then draw in turn with an occasional kong or a
stray tile taken, until the hand ends as a draw. The rules core decides every
outcome, so a script only chooses what the players do, never what happens.
"""

import random

from engine_core import tiles
from engine_core.dice import roll
from engine_core.hand import DRAW, PLAY, Hand, Refused
from engine_core.replay import apply
from engine_core.rulesets import load


def random_hand(seed, ruleset="fuzhou144", kong_rate=0.04, take_rate=0.0):
    """(scenario, hand): the §13 scenario and the Hand left at its end."""
    rng = random.Random(seed)
    rand = rng.randbytes
    rules = load(ruleset)
    codes = rules.tile_codes()
    rng.shuffle(codes)
    dealer = rng.randrange(4)
    dice = list(roll(rand))
    hand = Hand(rules, dealer, dice[0] + dice[1], bytearray(tiles.tile_id(c) for c in codes))
    gold = {"op": "reveal_gold"}
    if rules.gold_method == "dice":
        gold["dice"] = list(roll(rand))
    events = []
    for ev in ({"op": "deal"}, {"op": "replace_flowers"}, gold):
        apply(hand, ev)
        events.append(ev)
    seat = (dealer + 1) % 4          # the dealer discards first
    while hand.phase != DRAW:
        r = rng.random()
        if hand.phase == PLAY and r < kong_rate:
            who = rng.randrange(4)
            ev = {"op": "kong", "seat": who,
                  "kind": "concealed" if rng.random() < 0.4 else "exposed"}
            nxt = (who + 1) % 4
        elif r < kong_rate + take_rate:
            ev = {"op": "take", "slot": rng.randrange(rules.n_tiles)}
            nxt = seat
        else:
            ev = {"op": "draw", "seat": seat}
            nxt = (seat + 1) % 4
        try:
            apply(hand, ev)
        except Refused:
            continue                 # e.g. a stray take of an empty slot
        events.append(ev)
        seat = nxt
    scenario = {"ruleset": ruleset, "dealer": dealer, "dice": dice,
                "tiles": codes, "events": events}
    return scenario, hand
