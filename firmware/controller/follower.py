"""Following a hand from the walls in play (docs/rules.md §4-§11, docs/hand.md).

The RFID reader's table-top antennas (level 1) are read side after side.
A slot whose tag is missing in two reads of its side in a row has lost its
tile (one missing read is a glitch, healed by the next); a tag back in an
empty slot is a tile put back. Each loss is explained by the rules core:

* a position an event already took (`pending`): that event's tiles arrive;
* the head, in phase new: the deal; in play or the final group: a draw for
  the seat whose turn it is (turns go round; a kong key moves the turn);
* the tail, after the deal: the flower rounds, then the gold (tail method);
* a kong comes from its key (or the link) before its replacement is taken;
* anything else, once a whole round of reads has not explained it, is an
  irregular take (§11).

The core runs at most a few events ahead of the tiles: each event's public
state is kept in a row of a preallocated queue and published (link, display)
when its last tile has been seen to leave, in the order the events happened.
One `Hand` is reset for every hand: following allocates nothing but the
event dict of each published state.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from engine_core.hand import DEALT, FINAL, NEW, PLAY, REPLACED, Hand, Refused
from engine_core.tiles import NO_TILE
from firmware.controller.hand_events import (CONFIRM, MISSING, OP_BACK, OP_DEAL, OP_DRAW,
                                             OP_FLOWERS, OP_GOLD, OP_KONG, OP_TAKE, PRESENT,
                                             QUEUE, ROW, ROW_ARG, ROW_OP, WAS, HandEvents)
from firmware.drivers.rfid import WAITING
from firmware.hal import ticks_add, ticks_diff
from firmware.tags import UNKNOWN

_LEVEL_TOP = const(1)
_IRREGULAR = const(3)          # reads of a slot's side without its tag, and one more round
                               # unexplained: irregular
_SCANNING = const(4)           # in _side: a read of that side is out
# The hand's record (`rec`, what a hand needs to come back after a power
# cut: docs/reliability.md, The hand's record): a header, then one entry of
# 3 bytes per reserve change or irregular take, (op | concealed << 3 |
# (seat + 1, 0: none) << 4, R after (a take: its slot), the head position
# after it (255: none)).
REC_A = const(0)                # the dice of the hand
REC_B = const(1)
REC_GOLD_A = const(2)           # the gold roll's faces (dice method), 0: none
REC_GOLD_B = const(3)
REC_N = const(4)                # entries
REC_NOTED = const(5)            # 1: the record changed, to be written (TableController.write)
REC_FULL = const(6)             # 1: an entry did not fit (the record cannot bring the hand back)
REC_HEAD = const(7)
REC_MAX = const(26)             # entries: more than any hand seen holds


class HandFollower(HandEvents):
    """The hand followed from the reads; its events queued and published
    by HandEvents (controller/hand_events.py)."""
    def __init__(self, rules, rfid, builder, display, buzzer, emit, draw_grace_ms):
        """`builder`: shares the reader (its reads come first) and the tag
        table (UID -> tile id, for a tile put back)."""
        HandEvents.__init__(self, rules.n_tiles, display, buzzer, emit)
        self.rfid = rfid
        self.builder = builder
        self.draw_grace_ms = draw_grace_ms
        self.hand = Hand(rules, 0, 2, None)    # its buffers: `begin` lays out every hand
        self.active = False
        self.turn = 0
        self.irregular = 0
        self.glitches = 0          # a tag missing from one read only
        # The side read next; with _SCANNING set, its read is out.
        self._side = 0
        self._draw_at = -1         # when a draw (和局) is due, -1: none (ticks are >= 0)
        # The record's bytes (above), filled in the tick, written between
        # ticks by the table (TableController.write): made at boot, so
        # that the tick allocates nothing for it.
        self.rec = bytearray(REC_HEAD + 3 * REC_MAX)

    # -- the hand's life ------------------------------------------------------

    def begin(self, now, dealer, a, b, tile_ids):
        """The walls in play hold `tile_ids` (by slot, from the audit); the
        dice settled on a and b. The record is noted for the flash; the
        display is the caller's (`show_again`), once the record is
        written."""
        self.hand.reset(dealer, a + b, tile_ids)
        rec = self.rec
        rec[REC_A] = a
        rec[REC_B] = b
        rec[REC_GOLD_A] = 0
        rec[REC_GOLD_B] = 0
        rec[REC_N] = 0
        rec[REC_FULL] = 0
        rec[REC_NOTED] |= 1                   # a new hand: its record
        self.active = True
        self.turn = (dealer + 1) % 4         # the dealer discards first
        self.events = 0
        self.irregular = 0
        self.queued = 0
        self._first = 0
        self._draw_at = -1
        for s in range(len(tile_ids)):
            self._slots[s] = PRESENT if tile_ids[s] != NO_TILE else 0
            self._pending[s] = 0
        self._side = 0
        self._snapshot(QUEUE, OP_DEAL, 0, 0)     # the walls as they stand: no gold

    def end(self):
        """No more following; a read still on its way is taken and dropped
        by the next steps (the builder waits for the reader till then)."""
        self.active = False

    @property
    def phase(self):
        return self.hand.phase

    # -- commands (keys, link) ------------------------------------------------

    def kong(self, now, seat, concealed):
        """A kong declared by `seat`: None, or why it is refused."""
        if not self.active:
            return "no hand is being followed"
        hand = self.hand
        if hand.phase != PLAY:
            return "a kong is only declared in play (phase %s)" % hand.phase_name
        # A seat takes its kong's replacement before it can declare another:
        # a press before that is the same kong pressed again (a player who
        # cannot tell it was read, after a power cut), never a second one.
        r = self._rows
        for i in range(self.queued):
            q = (self._first + i) % QUEUE
            if r[q * ROW + ROW_OP] == OP_KONG and r[q * ROW + ROW_ARG] == seat and self._left[q]:
                return "this seat's kong is taken: its replacement comes first"
        if not self._apply(now, OP_KONG, seat, 1 if concealed else 0):
            return "the wall has no tile for a kong's replacement"
        self.turn = (seat + 1) % 4
        return None

    def wants_gold_dice(self):
        """This ruleset turns the gold by the dice (§7) and the hand is
        dealt: the dealer's next press rolls the table's dice for it (the
        last flower replacements may not have been seen go yet)."""
        hand = self.hand
        return (self.active and (hand.phase == DEALT or hand.phase == REPLACED)
                and hand.rules.gold_method == "dice")

    def gold_dice(self, now, a, b):
        """The gold roll settled on a and b: turn the gold up (its tiles are
        then awaited like any event's), the faces into the record. None,
        or why not."""
        if not self.wants_gold_dice():
            return "no gold roll is due"
        if self.hand.phase == DEALT:
            self._auto(now)                      # the flower rounds come first
        if not self._apply(now, OP_GOLD, a + b, 0):
            return "fewer than %d stacks left to count" % (a + b)
        self.rec[REC_GOLD_A] = a
        self.rec[REC_GOLD_B] = b
        return None

    # -- the tick -------------------------------------------------------------

    def step(self, now, follow):
        """Every tick, hand or not (a read asked for before the hand ended
        must still be taken off the reader); `follow`: read and follow the
        walls (False while the table is stopped by a fault)."""
        rfid = self.rfid
        if self._side & _SCANNING:
            self._side &= 3
            if rfid.done(_LEVEL_TOP):
                rfid.release()
                if self.active and follow:
                    self._read(now, self._side)
                    self._side = (self._side + 1) & 3
            elif rfid.state == WAITING:
                self._side |= _SCANNING      # still out
            # else timed out (a fault): ask again once it is cleared
        if not self.active or not follow:
            return
        # Not while the reader is in fault: the table finds the fault after
        # this step, on the same tick, and a request sent now would go to a
        # reader still down and time out again after the clear.
        if (not self._side & _SCANNING and rfid.state != WAITING and not rfid.fault
                and not self.builder.reading()):
            rfid.scan(now, self._side, _LEVEL_TOP)
            self._side |= _SCANNING
        if self._draw_at >= 0 and ticks_diff(now, self._draw_at) >= 0:
            self._draw_at = -1
            self._apply(now, OP_DRAW, self.turn, 0)      # D <= 0: the hand is a draw

    def _read(self, now, side):
        seen = self.rfid.seen
        slots = self._slots
        per_side = len(slots) // 4
        first = side * per_side
        last = first + per_side
        for slot in range(first, last):
            v = slots[slot]
            if seen[slot]:
                if not v & PRESENT:
                    self._back(now, slot)
                elif v & MISSING:
                    self.glitches += 1           # gone for one read only
                slots[slot] &= PRESENT
            elif v & PRESENT and v & MISSING != MISSING:
                slots[slot] = v + 1
        # Confirmed losses, in the order the rules explain them: tiles of
        # events already applied, then head and tail (each may apply an event
        # that explains more), then what stays unexplained long enough.
        again = True
        while again:
            again = False
            for slot in range(first, last):
                v = slots[slot]
                if v & PRESENT and v & MISSING >= CONFIRM and self._explain(now, slot):
                    again = True
        for slot in range(first, last):
            v = slots[slot]
            if v & PRESENT and v & MISSING >= _IRREGULAR:
                slots[slot] = v & MISSING     # gone, no event explains it: a take
                self.irregular += 1
                self._apply(now, OP_TAKE, slot, 0)

    def _explain(self, now, slot):
        hand = self.hand
        wall = hand.wall
        p = wall.geo.pos_of_slot[slot]
        if not self._pending[p] and not wall.how[p]:
            phase = hand.phase
            if p == wall.head_pos():
                if phase == NEW:
                    self._apply(now, OP_DEAL, 0, 0)
                elif (phase == PLAY or phase == FINAL) and hand.drawable > 0:
                    seat = self.turn
                    if self._apply(now, OP_DRAW, seat, 0):
                        self.turn = (seat + 1) & 3
            elif p == wall.tail_pos() and (phase == DEALT or phase == REPLACED):
                self._auto(now)
        q = self._pending[p] - 1
        if q >= 0:                         # the tile an event waits for: arrived
            self._slots[slot] &= MISSING
            self._pending[p] = 0
            self._left[q] -= 1
            self._flush(now)
            return True
        if wall.how[p] and not self._pending[p]:
            # The core had it gone already (a tile put back by hand, then
            # taken again, that no event claims): the wall count is right.
            self._slots[slot] &= MISSING
            return True
        return False

    def _back(self, now, slot):
        """A tag in a slot whose tile had gone: a tile put back (§11)."""
        self._slots[slot] |= PRESENT
        wall = self.hand.wall
        p = wall.geo.pos_of_slot[slot]
        tid = self.rfid.ids[slot]
        if self._pending[p] or not wall.how[p] or tid == UNKNOWN:
            # Not one of the wall's tiles, or one an event still waits for:
            # reported, not counted (it will be looked at again when it goes).
            self.emit("irregular", {"slot": slot, "reason": "unexpected"})
            return
        wall.put_back(slot)
        wall.tile[p] = tid             # the tile the reader sees there now
        self._apply(now, OP_BACK, slot, 0)

    # -- events and their published states -----------------------------------

    def _auto(self, now):
        """The events no one declares: flower rounds, and the gold by the tail."""
        hand = self.hand
        if hand.phase == DEALT:
            self._apply(now, OP_FLOWERS, 0, 0)
        if hand.phase == REPLACED and hand.rules.gold_method == "tail":
            self._apply(now, OP_GOLD, 0, 0)

    def _apply(self, now, op, arg, kind):
        """Apply one event to the core; queue its state until its tiles are
        seen gone. False (nothing changed) if the rules refuse it."""
        if self.queued == QUEUE:
            self._make_room(now)
        reserve = self.hand.reserve
        if not self._to_core(op, arg, kind):
            return False
        self._note(op, arg, kind, reserve)
        self._enqueue(op, arg, kind)
        self._flush(now)
        return True

    def _to_core(self, op, arg, kind):
        """The event applied to the rules core, what was gone before it
        marked (WAS); False, and nothing marked, if the core refuses it."""
        hand = self.hand
        how = hand.wall.how
        pending = self._pending
        for p in range(len(how)):          # what was gone before the event
            if how[p]:
                pending[p] |= WAS
        try:
            if op == OP_DEAL:
                hand.deal()
            elif op == OP_FLOWERS:
                hand.replace_flowers()
            elif op == OP_GOLD:
                hand.reveal_gold(arg)            # the dice's sum, or 0: by the tail
            elif op == OP_DRAW:
                hand.draw(arg)
            elif op == OP_KONG:
                hand.kong(arg, kind == 1)
            elif op == OP_TAKE:
                hand.take(arg)
        except Refused:
            for p in range(len(how)):
                pending[p] &= ~WAS
            return False
        return True

    def _note(self, op, arg, kind, reserve):
        """Into the hand's record (`rec`): the gold, a reserve change (a
        kong, a flower quad, both at once; `reserve` the reserve before the
        event) or an irregular take, in the core's order, with the head
        after it (where it fell among the draws)."""
        hand = self.hand
        rec = self.rec
        if op == OP_GOLD:
            rec[REC_NOTED] |= 1
        if hand.reserve != reserve or op == OP_TAKE or op == OP_BACK:
            n = rec[REC_N]
            if n < REC_MAX:
                at = REC_HEAD + 3 * n
                rec[at] = op | kind << 3 | (arg + 1 if op == OP_KONG or op == OP_DRAW
                                            else 0) << 4
                rec[at + 1] = arg if op == OP_TAKE or op == OP_BACK else hand.reserve
                rec[at + 2] = hand.wall.head_pos() & 255
                rec[REC_N] = n + 1
            else:
                rec[REC_FULL] = 1
            rec[REC_NOTED] |= 1

    def _flush(self, now):
        while self.queued and not self._left[self._first]:
            self._publish(now)
        if not self.queued:
            hand = self.hand
            if hand.phase == DEALT or hand.phase == REPLACED:
                self._auto(now)
            elif (hand.phase == PLAY or hand.phase == FINAL) and hand.drawable <= 0 \
                    and self._draw_at < 0:
                # No tile left to draw: the hand is a draw (§8), unless a
                # player shows a win on the last tile within the grace time.
                self._draw_at = ticks_add(now, self.draw_grace_ms)
