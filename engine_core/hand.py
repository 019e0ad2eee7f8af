"""One hand followed by the rules (spec §5-§8, §11): phases, reserve, gold.

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
from engine_core.check import is_int
from engine_core.dice import SEATS, is_seat
from engine_core.geometry import Geometry
from engine_core.wall import Wall, HEAD, TAIL, IRREGULAR, GOLD

NEW = const(0)
DEALT = const(1)
REPLACED = const(2)
PLAY = const(3)
FINAL = const(4)
DRAW = const(5)
PHASE_NAMES = ("new", "dealt", "replaced", "play", "final", "draw")

_N_FLOWER = const(15)        # 1z..7z, 1f..8f
_HAND = const(0)             # seat bytes: hand size of seats 0..3
_FLOWERS = const(4)          # then 4 x 15 counts of flowers received
_NO_GOLD = const(255)
_BONUS_GROUPS = ((34, 35, 36, 37), (38, 39, 40, 41))   # 春夏秋冬, 梅兰竹菊
# Flower counters (1z..7z, 1f..8f) in the order their codes sort as strings,
# so a seat's flowers come out sorted without sorting.
_FLOWERS_BY_CODE = tuple(sorted(range(_N_FLOWER),
                                key=lambda j: tiles.CODES[tiles.FIRST_HONOR + j]))


class Refused(Exception):
    """An event the rules do not allow now; the hand is unchanged."""


class Hand:
    def __init__(self, ruleset, dealer, dice_sum, tile_ids):
        """`tile_ids`: tile id per physical slot, as the RFID reader sees it."""
        self._check(ruleset, dealer, tile_ids)
        self.rules = ruleset
        self.wall = Wall(Geometry(ruleset.stacks, dealer, dice_sum), tile_ids)
        self._seats = bytearray(_FLOWERS + SEATS * _N_FLOWER)
        self._saved_seats = bytearray(len(self._seats))
        self._saved = [0, 0, 0]        # phase, reserve, gold (small ints: no allocation)
        self._start(dealer)

    def reset(self, dealer, dice_sum, tile_ids):
        """Another hand in the same buffers: what the controller does at
        every hand, so that following hands allocates nothing."""
        self._check(self.rules, dealer, tile_ids)
        self.wall.geo.reset(dealer, dice_sum)
        self.wall.reset(tile_ids)
        for j in range(len(self._seats)):
            self._seats[j] = 0
        self._start(dealer)

    def _check(self, ruleset, dealer, tile_ids):
        if not is_seat(dealer):
            raise ValueError("dealer must be a seat 0..3, not %r" % (dealer,))
        if len(tile_ids) != ruleset.n_tiles:
            raise ValueError("%s needs %d tiles, not %d"
                             % (ruleset.name, ruleset.n_tiles, len(tile_ids)))

    def _start(self, dealer):
        self.dealer = dealer
        self.phase = NEW
        self.reserve = self.rules.reserve_base    # R
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
        for j in _FLOWERS_BY_CODE:
            for _ in range(self._seats[base + j]):
                out.append(tiles.CODES[tiles.FIRST_HONOR + j])
        return out

    # -- events ----------------------------------------------------------------

    def deal(self):
        """§5: four rounds of two stacks each, then the dealer's extra tile."""
        self._expect(NEW, "deal")
        self._atomic(Hand._deal, 0, 0)
        self.phase = DEALT

    def replace_flowers(self):
        """§6: flower rounds from the tail until no seat took a flower."""
        self._expect(DEALT, "replace_flowers")
        self._atomic(Hand._replace_flowers, 0, 0)
        self.phase = REPLACED

    def reveal_gold(self, dice_sum=0):
        """§7: turn up the gold indicator, by the tail or by the dice."""
        self._expect(REPLACED, "reveal_gold")
        if self.rules.gold_method == "dice":
            if dice_sum < 2 or dice_sum > 12:
                raise Refused("reveal_gold: the dice method needs a roll of two dice")
            self._atomic(Hand._gold_by_dice, 0, dice_sum)
        else:
            if dice_sum:
                raise Refused("reveal_gold: this ruleset turns the gold from the tail, no dice")
            self._atomic(Hand._gold_by_tail, 0, 0)
        self.phase = PLAY

    def draw(self, seat):
        """§8: a normal head draw is due for `seat`."""
        self._check_seat(seat)
        if self.phase != PLAY and self.phase != FINAL:
            raise Refused("draw: not allowed in phase %s" % self.phase_name)
        d = self.drawable
        if d <= 0:
            self.phase = DRAW              # 和局: nothing is taken
        elif self.phase == FINAL or d <= self.rules.final_group:
            self.phase = FINAL             # counted off, no flower handling
            self._take(self.wall.head_pos(), HEAD)
        else:
            self._atomic(Hand._draw_in_play, seat, 0)

    def kong(self, seat, concealed):
        """§8: a kong raises R, then the seat takes one tile from the tail."""
        self._check_seat(seat)
        if self.phase != PLAY:
            raise Refused("kong: not allowed in phase %s" % self.phase_name)
        self._atomic(Hand._kong, seat,
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

    # -- the work behind the events (run inside _atomic) --------------------

    def _deal(self, seat, n):
        for _round in range(4):
            for j in range(SEATS):
                seat = (self.dealer + j) % SEATS
                for _tile in range(4):
                    self._to_hand(seat, self._take(self.wall.head_pos(), HEAD))
        self._to_hand(self.dealer, self._take(self.wall.head_pos(), HEAD))

    def _replace_flowers(self, seat, n):
        seats = self._seats
        # Round 1 replaces every flower dealt; later rounds only the flowers
        # taken as replacements in the round before (kept in `due`).
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
                    tid = self._take(self.wall.tail_pos(), TAIL)
                    if tiles.is_flower(tid):
                        self._receive_flower(seat, tid)  # set aside at round end
                        due[seat] += 1
                    else:
                        seats[_HAND + seat] += 1

    def _gold_by_tail(self, seat, n):
        while True:
            p = self.wall.tail_pos()
            tid = self._take(p, TAIL)
            if not tiles.is_flower(tid):
                self.wall.how[p] = GOLD
                self.gold = tid
                return
            self._receive_flower(self.dealer, tid)

    def _gold_by_dice(self, seat, n):
        wall = self.wall
        i = wall.stack_back(n)
        while i >= 0:
            tid = self._take(wall.upper_pos(i), GOLD)
            if not tiles.is_flower(tid):
                self.gold = tid
                return
            self._receive_flower(self.dealer, tid)
            i = wall.stack_back(1, i - 1)
        raise Refused("reveal_gold: fewer than %d stacks left to count" % n)

    def _draw_in_play(self, seat, n):
        tid = self._take(self.wall.head_pos(), HEAD)
        while tiles.is_flower(tid):
            self._receive_flower(seat, tid)
            tid = self._take(self.wall.tail_pos(), TAIL)

    def _kong(self, seat, n):
        self.reserve += n
        tid = self._take(self.wall.tail_pos(), TAIL)
        while tiles.is_flower(tid):
            self._receive_flower(seat, tid)
            tid = self._take(self.wall.tail_pos(), TAIL)

    # -- helpers ---------------------------------------------------------------

    def _take(self, p, how):
        if p < 0:
            raise Refused("the wall is empty")
        self.wall.remove(p, how)
        return self.wall.tile[p]

    def _to_hand(self, seat, tid):
        self._seats[_HAND + seat] += 1
        if tiles.is_flower(tid):
            self._receive_flower(seat, tid)

    def _receive_flower(self, seat, tid):
        """A flower reached `seat`: count it, and a completed quad once (§8)."""
        base = _FLOWERS + seat * _N_FLOWER
        j = tid - tiles.FIRST_HONOR
        self._seats[base + j] += 1
        if tid < tiles.FIRST_BONUS:
            if self._seats[base + j] == 4:
                self.reserve += self.rules.quad
        elif self.rules.set_is_quad and self._seats[base + j] == 1:
            for group in _BONUS_GROUPS:
                if tid in group and self._has_all(base, group):
                    self.reserve += self.rules.quad

    def _has_all(self, base, group):
        for t in group:
            if not self._seats[base + t - tiles.FIRST_HONOR]:
                return False
        return True

    def _expect(self, phase, op):
        if self.phase != phase:
            raise Refused("%s: not allowed in phase %s (only in %s)"
                          % (op, self.phase_name, PHASE_NAMES[phase]))

    def _check_seat(self, seat):
        if not is_seat(seat):
            raise Refused("seat must be 0..3, not %r" % (seat,))

    def _atomic(self, step, seat, n):
        """Run `step(self, seat, n)`; on refusal put everything back as it
        was. `step` is a plain function (Hand._kong): a bound method would
        be a heap object per event."""
        self.wall.save()
        self._saved_seats[:] = self._seats
        saved = self._saved
        saved[0] = self.phase
        saved[1] = self.reserve
        saved[2] = self.gold
        try:
            step(self, seat, n)
        except Refused:
            self.wall.restore()
            self._seats[:] = self._saved_seats
            self.phase = saved[0]
            self.reserve = saved[1]
            self.gold = saved[2]
            raise
