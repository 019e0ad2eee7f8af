"""One hand followed by the rules (docs/rules.md §5-§8, §11): phases, reserve, gold.

`Hand` applies the rule-driven events of the replay tool (deal, flower
rounds, gold, head draws, kongs, irregular takes) on top of a `Wall`. Every
event is all-or-nothing: a refused event raises `Refused` and leaves the
state exactly as it was (the wall and the per-seat bytes are restored from a
preallocated copy, no allocation).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

from engine_core import tiles
from engine_core.tiles import is_int
from engine_core.dice import SEATS
from engine_core.wall import Geometry, Wall, HEAD, TAIL, IRREGULAR, GOLD

NEW = const(0)
DEALT = const(1)
REPLACED = const(2)
PLAY = const(3)
FINAL = const(4)
DRAW = const(5)
PHASE_NAMES = ("new", "dealt", "replaced", "play", "final", "draw")

_FIRST_HONOR = const(27)     # 1z: tiles' id layout, here as consts (no lookup,
_FIRST_BONUS = const(34)     # and no public names in tiles for the board to keep)
_N_FLOWER = const(15)        # 1z..7z, 1f..8f
_HAND = const(0)             # seat bytes: hand size of seats 0..3
_FLOWERS = const(4)          # then 4 x 15 counts of flowers received
_NO_GOLD = const(255)
# The work behind the events, one code each for `_atomic`: one method and
# its branches rather than a method per step, because on the board every
# function costs heap and every method name an interned name.
_DEAL = const(0)
_REPLACE = const(1)
_GOLD = const(2)             # n: the dice's sum, or 0 for the tail method
_DRAW = const(3)
_KONG = const(4)             # n: what the kong adds to R
_NOT_NOW = const("%s: not allowed in phase %s (only in %s)")
_NOT_SEAT = const("%s must be 0..3, not %r")


class Refused(Exception):
    """An event the rules do not allow now; the hand is unchanged."""


class Hand:
    def __init__(self, ruleset, dealer, dice_sum, tile_ids):
        """`tile_ids`: tile id per physical slot, as the RFID reader sees it;
        None: the buffers only, for the hands `reset` lays out (the
        controller's: no tile buffer made only to be thrown away)."""
        self.rules = ruleset
        # The buffers for any break and tiles; `reset` checks the input and
        # lays this hand out in them, as it does for every later hand.
        self.wall = Wall(Geometry(ruleset.stacks, 0, 2), None)
        self._seats = bytearray(_FLOWERS + SEATS * _N_FLOWER)
        # What a refused event puts back: phase, reserve, gold (small ints:
        # no allocation), a copy of the seat bytes and one of the wall's `how`.
        self._saved = [0, 0, 0, bytearray(len(self._seats)), bytearray(ruleset.n_tiles)]
        self.reset(dealer, dice_sum, tile_ids)

    def reset(self, dealer, dice_sum, tile_ids):
        """Another hand in the same buffers: what the controller does at
        every hand, so that following hands allocates nothing."""
        rules = self.rules
        if not is_int(dealer, 0, SEATS - 1):
            raise ValueError(_NOT_SEAT % ("dealer", dealer))
        if tile_ids is not None and len(tile_ids) != rules.n_tiles:
            raise ValueError("%s needs %d tiles, not %d"
                             % (rules.name, rules.n_tiles, len(tile_ids)))
        self.wall.geo.reset(dealer, dice_sum)
        self.wall.reset(tile_ids)
        seats = self._seats
        for j in range(len(seats)):
            seats[j] = 0
        self.dealer = dealer
        self.phase = NEW
        self.reserve = rules.reserve_base    # R
        self.gold = _NO_GOLD
        self.irregular = 0

    # -- what the table shows ------------------------------------------------

    @property
    def phase_name(self):
        return PHASE_NAMES[self.phase]

    @property
    def gold_code(self):
        return None if self.gold == _NO_GOLD else tiles.CODES[self.gold]

    def counted_reserve(self):
        """R as the wall sees it: with gold_in_reserve the turned-up
        indicator stands for one reserved tile (§13 `drawable`)."""
        if self.rules.gold_in_reserve and self.gold != _NO_GOLD:
            return self.reserve - 1
        return self.reserve

    @property
    def drawable(self):
        return self.wall.count - self.counted_reserve()

    def marker_stack(self):
        """Draw-order stack where the gold indicator sits (§9), or -1."""
        return self.wall.stack_back((self.counted_reserve() + 1) // 2)

    def hand_size(self, seat):
        return self._seats[_HAND + seat]

    def flower_codes(self, seat):
        """Flower codes the seat has set aside, sorted as strings."""
        out = []
        if self.phase == NEW or self.phase == DEALT:
            return out           # nothing is set aside before §6
        base = _FLOWERS + seat * _N_FLOWER
        for j in range(_N_FLOWER):
            for _ in range(self._seats[base + j]):
                out.append(tiles.CODES[_FIRST_HONOR + j])
        out.sort()               # in place: 1f 1z 2f 2z ...
        return out

    # -- events ----------------------------------------------------------------

    def deal(self):
        """§5: four rounds of two stacks each, then the dealer's extra tile."""
        if self.phase != NEW:
            raise Refused(_NOT_NOW % ("deal", self.phase_name, PHASE_NAMES[NEW]))
        self._atomic(_DEAL, 0, 0)
        self.phase = DEALT

    def replace_flowers(self):
        """§6: flower rounds from the tail until no seat took a flower."""
        if self.phase != DEALT:
            raise Refused(_NOT_NOW % ("replace_flowers", self.phase_name, PHASE_NAMES[DEALT]))
        self._atomic(_REPLACE, 0, 0)
        self.phase = REPLACED

    def reveal_gold(self, dice_sum=0):
        """§7: turn up the gold indicator, by the tail or by the dice."""
        if self.phase != REPLACED:
            raise Refused(_NOT_NOW % ("reveal_gold", self.phase_name, PHASE_NAMES[REPLACED]))
        if self.rules.gold_method == "dice":
            if dice_sum < 2 or dice_sum > 12:
                raise Refused("reveal_gold: the dice method needs a roll of two dice")
        elif dice_sum:
            raise Refused("reveal_gold: this ruleset turns the gold from the tail, no dice")
        self._atomic(_GOLD, 0, dice_sum)
        self.phase = PLAY

    def draw(self, seat):
        """§8: a normal head draw is due for `seat`."""
        if not is_int(seat, 0, SEATS - 1):
            raise Refused(_NOT_SEAT % ("seat", seat))
        if self.phase != PLAY and self.phase != FINAL:
            raise Refused("draw: not allowed in phase %s" % self.phase_name)
        d = self.drawable
        if d <= 0:
            self.phase = DRAW              # 和局: nothing is taken
        elif self.phase == FINAL or d <= self.rules.final_group:
            self.phase = FINAL             # counted off, no flower handling
            self._take(self.wall.head_pos(), HEAD, -1)
        else:
            self._atomic(_DRAW, seat, 0)

    def kong(self, seat, concealed):
        """§8: a kong raises R, then the seat takes one tile from the tail."""
        if not is_int(seat, 0, SEATS - 1):
            raise Refused(_NOT_SEAT % ("seat", seat))
        if self.phase != PLAY:
            raise Refused(_NOT_NOW % ("kong", self.phase_name, PHASE_NAMES[PLAY]))
        self._atomic(_KONG, seat,
                     self.rules.kong_concealed if concealed else self.rules.kong_exposed)

    def take(self, slot):
        """§11: a tile left a slot the rules did not ask for."""
        if not is_int(slot, 0, self.rules.n_tiles - 1):
            raise Refused("take: slot must be 0..%d, not %r" % (self.rules.n_tiles - 1, slot))
        p = self.wall.geo.pos_of_slot[slot]
        if self.wall.how[p]:
            raise Refused("take: slot %d is already empty" % slot)
        self.wall.remove(p, IRREGULAR)
        self.irregular += 1

    # -- the work behind the events ------------------------------------------

    def _atomic(self, step, seat, n):
        """Do `step` (_DEAL ... _KONG) for `seat` with `n`; on refusal put
        everything back as it was."""
        wall = self.wall
        seats = self._seats
        saved = self._saved
        saved[4][:] = wall.how
        saved[0] = self.phase
        saved[1] = self.reserve
        saved[2] = self.gold
        saved[3][:] = seats
        try:
            if step == _DEAL:
                # 4 rounds x 4 seats x 4 tiles from the head, the dealer
                # first; the 65th tile goes to seat dealer + 16 = the dealer.
                for k in range(4 * SEATS * 4 + 1):
                    seat = (self.dealer + (k >> 2)) % SEATS
                    self._take(wall.head_pos(), HEAD, seat)
                    seats[_HAND + seat] += 1
            elif step == _REPLACE:
                # Round 1 replaces every flower dealt; later rounds only the
                # flowers taken as replacements in the round before (`due`).
                due = [0, 0, 0, 0]
                for seat in range(SEATS):
                    base = _FLOWERS + seat * _N_FLOWER
                    for j in range(_N_FLOWER):
                        due[seat] += seats[base + j]
                    seats[_HAND + seat] -= due[seat]            # set aside
                while due[0] or due[1] or due[2] or due[3]:
                    for j in range(SEATS):
                        seat = (self.dealer + j) % SEATS
                        n = due[seat]
                        due[seat] = 0
                        for _tile in range(n):
                            tid = self._take(wall.tail_pos(), TAIL, seat)
                            if tiles.is_flower(tid):
                                due[seat] += 1           # set aside at round end
                            else:
                                seats[_HAND + seat] += 1
            elif step == _GOLD and n:
                # By the dice: count n stacks back from the tail (§7) and
                # turn up the stack's upper tile (the bottom once the top is
                # gone; stack_back counts only stacks holding a tile).
                i = wall.stack_back(n)
                while True:
                    if i < 0:
                        raise Refused("reveal_gold: fewer than %d stacks left to count" % n)
                    p = 2 * i + 1 if wall.how[2 * i] else 2 * i
                    tid = self._take(p, GOLD, self.dealer)
                    if not tiles.is_flower(tid):
                        break
                    i = wall.stack_back(1, i - 1)
                self.gold = tid
            elif step == _GOLD:
                # By the tail: flowers turned up go to the dealer.
                while True:
                    p = wall.tail_pos()
                    tid = self._take(p, TAIL, self.dealer)
                    if not tiles.is_flower(tid):
                        break
                wall.how[p] = GOLD
                self.gold = tid
            else:
                # _DRAW from the head, or _KONG: R rises, then from the tail;
                # each flower is replaced from the tail.
                self.reserve += n
                if step == _DRAW:
                    tid = self._take(wall.head_pos(), HEAD, seat)
                else:
                    tid = self._take(wall.tail_pos(), TAIL, seat)
                while tiles.is_flower(tid):
                    tid = self._take(wall.tail_pos(), TAIL, seat)
        except Refused:
            wall.restore(saved[4])
            seats[:] = saved[3]
            self.phase = saved[0]
            self.reserve = saved[1]
            self.gold = saved[2]
            raise

    def _take(self, p, how, seat):
        """The tile at position p leaves the wall as `how` (its id is
        returned); a flower is counted to `seat` (none if seat < 0), and a
        completed quad or set once (§8)."""
        if p < 0:
            raise Refused("the wall is empty")
        self.wall.remove(p, how)
        tid = self.wall.tile[p]
        if seat < 0 or not tiles.is_flower(tid):
            return tid
        seats = self._seats
        j = _FLOWERS + seat * _N_FLOWER + tid - _FIRST_HONOR
        seats[j] += 1
        if tid < _FIRST_BONUS:
            if seats[j] == 4:
                self.reserve += self.rules.quad
        elif self.rules.set_is_quad and seats[j] == 1:
            # The set of four bonus tiles tid is in: 春夏秋冬 1f-4f or 梅兰竹菊 5f-8f.
            g = j - (tid - _FIRST_BONUS) % 4
            if seats[g] and seats[g + 1] and seats[g + 2] and seats[g + 3]:
                self.reserve += self.rules.quad
        return tid
