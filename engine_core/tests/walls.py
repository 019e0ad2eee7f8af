"""Building walls for tests: put chosen tiles at chosen draw-order positions.

Runs on both interpreters. `arrange()` always lays out the ruleset's full
multiset, so scenarios stay regular (§11) unless a test means otherwise.
"""

from engine_core import tiles
from engine_core.wall import Geometry
from engine_core.rulesets import load


def arrange(ruleset, dealer, dice_sum, placed):
    """Codes per physical slot with `placed` = {draw-order position: code}.

    The other tiles of the set fill the rest: suit tiles nearest both ends of
    the draw order, flowers in the stretch the head and tail reach last
    (around 70 % of the way), so only the placed flowers matter early on.
    """
    rules = load(ruleset) if not hasattr(ruleset, "stacks") else ruleset
    geo = Geometry(rules.stacks, dealer, dice_sum)
    left = rules.tile_counts()
    for p in placed:
        tid = tiles.tile_id(placed[p])
        if not left[tid]:
            raise ValueError("more %s placed than %s has" % (placed[p], rules.name))
        left[tid] -= 1
    suits = []
    flowers = []
    for tid in range(tiles.N_KINDS):
        for _ in range(left[tid]):
            (flowers if tiles.is_flower(tid) else suits).append(tiles.CODES[tid])
    n_pos = 2 * geo.n_stacks
    centre = n_pos * 7 // 10
    free = [p for p in range(n_pos) if p not in placed]
    free.sort(key=lambda p: -abs(p - centre))
    by_pos = {}
    for p, c in zip(free, suits + flowers):
        by_pos[p] = c
    for p in placed:
        by_pos[p] = placed[p]
    out = [None] * n_pos
    for p in by_pos:
        out[geo.slot_of_pos[p]] = by_pos[p]
    return out


def scenario(ruleset, dealer, dice, placed, events):
    """A §13 scenario object with an arranged wall."""
    return {
        "ruleset": ruleset,
        "dealer": dealer,
        "dice": list(dice),
        "tiles": arrange(ruleset if isinstance(ruleset, str) else load(ruleset),
                         dealer, dice[0] + dice[1], placed),
        "events": events,
    }


def tail_pos(n_stacks, k):
    """The k-th tail position (k = 0 first) of an untouched wall."""
    return 2 * (n_stacks - 1 - k // 2) + k % 2


OPENING = [{"op": "deal"}, {"op": "replace_flowers"}, {"op": "reveal_gold"}]
