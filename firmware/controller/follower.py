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

from engine_core import tiles
from engine_core.hand import DEALT, DRAW, FINAL, NEW, PHASE_NAMES, PLAY, REPLACED, Hand, Refused
from engine_core.tiles import NO_TILE
from firmware.drivers import panel
from firmware.hal import ticks_add, ticks_diff
from firmware.tags import UNKNOWN

# By _OP_*: a tuple, not a string split at every event (a list and seven
# strings of garbage each time).
_OPS = const(("deal", "replace_flowers", "reveal_gold", "draw", "kong", "take", "put_back"))
_OP_DEAL = const(0)
_OP_FLOWERS = const(1)
_OP_GOLD = const(2)
_OP_DRAW = const(3)
_OP_KONG = const(4)
_OP_TAKE = const(5)
_OP_BACK = const(6)

_LEVEL_TOP = const(1)
_WAITING = const(1)            # rfid.WAITING
_CONFIRM = const(2)            # reads of a slot's side without its tag: a tile gone
_IRREGULAR = const(3)          # ... and one more round unexplained: irregular
_ROW = const(14)               # a published state: see _snapshot
_QUEUE = const(8)
_NONE = const(255)
_REDRAW = const(254)           # in what is shown: not a value shown, so the next is sent
_SHOWN = const(_ROW * (_QUEUE + 1))   # in _rows, after them: drawable + 128, marker seat, stack, alert, gold
_SCANNING = const(4)           # in _side: a read of that side is out
_WAS = const(0x80)             # in _pending, during _apply: gone before the event
_PRESENT = const(0x80)         # in _slots: the tile is there (as published)
_MISSING = const(0x7F)         # in _slots: reads in a row without its tag
# The hand's record (`rec`, what a hand needs to come back after a power
# cut: docs/reliability.md, The hand's record): a header, then one entry of
# 3 bytes per reserve change or irregular take, (op | concealed << 3 |
# (seat + 1, 0: none) << 4, R after (a take: its slot), the head position
# after it (255: none)).
_R_A = const(0)                # the dice of the hand
_R_B = const(1)
_R_GOLD_DICE = const(2)        # the gold roll's sum (dice method), 0: none
_R_N = const(3)                # entries
_R_NOTED = const(4)            # 1: the record changed, to be written (TableController.write)
_R_FULL = const(5)             # 1: an entry did not fit (the record cannot bring the hand back)
_R_HEAD = const(6)
_R_MAX = const(26)             # entries: more than any hand seen holds (the buffer's 84
                               # bytes fit the heap block its 85 took before)


class HandFollower:
    def __init__(self, rules, rfid, builder, display, buzzer, emit, draw_grace_ms):
        """`builder`: shares the reader (its reads come first) and the tag
        table (UID -> tile id, for a tile put back)."""
        n = rules.n_tiles
        self.rfid = rfid
        self.builder = builder
        self.display = display
        self.buzzer = buzzer
        self.emit = emit
        self.draw_grace_ms = draw_grace_ms
        self.hand = Hand(rules, 0, 2, None)    # its buffers: `begin` lays out every hand
        self.active = False
        self.turn = 0
        self.events = 0            # states published this hand
        self.irregular = 0
        self.glitches = 0          # a tag missing from one read only
        self.queued = 0
        self._first = 0            # ring index of the oldest queued event
        # The queue's rows, then the last state published (`public`, and
        # what a display shows again), then what the display shows (5
        # bytes at _SHOWN: one buffer, not two, keeps the instance within
        # 23 attributes, docs/heap-idioms.md 13c).
        self._rows = bytearray(_SHOWN + 5)
        self._left = bytearray(_QUEUE)       # tiles of each queued event not yet seen gone
        # By position: queue index + 1 of its event (and _WAS in _apply).
        # By slot: _PRESENT | reads in a row without its tag. Two buffers
        # where four would hold the same: the heap's largest free block
        # keeps the 320 B (docs/heap-idioms.md, 17).
        self._pending = bytearray(n)
        self._slots = bytearray(n)
        # The side read next; with _SCANNING set, its read is out.
        self._side = 0
        self._draw_at = -1         # when a draw (和局) is due, -1: none (ticks are >= 0)
        # The record's bytes (above), filled in the tick, written between
        # ticks by the table (TableController.write): made at boot, so
        # that the tick allocates nothing for it.
        self.rec = bytearray(_R_HEAD + 3 * _R_MAX)

    # -- the hand's life ------------------------------------------------------

    def begin(self, now, dealer, a, b, tile_ids):
        """The walls in play hold `tile_ids` (by slot, from the audit); the
        dice showed a and b."""
        self.hand.reset(dealer, a + b, tile_ids)
        rec = self.rec
        rec[_R_A] = a
        rec[_R_B] = b
        rec[_R_GOLD_DICE] = 0
        rec[_R_N] = 0
        rec[_R_FULL] = 0
        rec[_R_NOTED] |= 1                   # a new hand: its record
        self.active = True
        self.turn = (dealer + 1) % 4         # the dealer discards first
        self.events = 0
        self.irregular = 0
        self.queued = 0
        self._first = 0
        self._draw_at = -1
        for s in range(len(tile_ids)):
            self._slots[s] = _PRESENT if tile_ids[s] != NO_TILE else 0
            self._pending[s] = 0
        self._side = 0
        self._snapshot(_QUEUE, _OP_DEAL, 0, 0)     # the walls as they stand: no gold
        self.show_again(now)

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
            q = (self._first + i) % _QUEUE
            if r[q * _ROW] == _OP_KONG and r[q * _ROW + 1] == seat and self._left[q]:
                return "this seat's kong is taken: its replacement comes first"
        if not self._apply(now, _OP_KONG, seat, 1 if concealed else 0):
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

    def gold_dice(self, now, total):
        """The gold roll settled on `total`: turn the gold up (its tiles are
        then awaited like any event's). None, or why not."""
        if not self.wants_gold_dice():
            return "no gold roll is due"
        if self.hand.phase == DEALT:
            self._auto(now)                      # the flower rounds come first
        if not self._apply(now, _OP_GOLD, total, 0):
            return "fewer than %d stacks left to count" % total
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
            elif rfid.state == _WAITING:
                self._side |= _SCANNING      # still out
            # else timed out (a fault): ask again once it is cleared
        if not self.active or not follow:
            return
        # Not while the reader is in fault: the table finds the fault after
        # this step, on the same tick, and a request sent now would go to a
        # reader still down and time out again after the clear.
        if (not self._side & _SCANNING and rfid.state != _WAITING and not rfid.fault
                and not self.builder.reading()):
            rfid.scan(now, self._side, _LEVEL_TOP)
            self._side |= _SCANNING
        if self._draw_at >= 0 and ticks_diff(now, self._draw_at) >= 0:
            self._draw_at = -1
            self._apply(now, _OP_DRAW, self.turn, 0)      # D <= 0: the hand is a draw

    def _read(self, now, side):
        seen = self.rfid.seen
        slots = self._slots
        per_side = len(slots) // 4
        first = side * per_side
        last = first + per_side
        for slot in range(first, last):
            v = slots[slot]
            if seen[slot]:
                if not v & _PRESENT:
                    self._back(now, slot)
                elif v & _MISSING:
                    self.glitches += 1           # gone for one read only
                slots[slot] &= _PRESENT
            elif v & _PRESENT and v & _MISSING != _MISSING:
                slots[slot] = v + 1
        # Confirmed losses, in the order the rules explain them: tiles of
        # events already applied, then head and tail (each may apply an event
        # that explains more), then what stays unexplained long enough.
        again = True
        while again:
            again = False
            for slot in range(first, last):
                v = slots[slot]
                if v & _PRESENT and v & _MISSING >= _CONFIRM and self._explain(now, slot):
                    again = True
        for slot in range(first, last):
            v = slots[slot]
            if v & _PRESENT and v & _MISSING >= _IRREGULAR:
                slots[slot] = v & _MISSING     # gone, no event explains it: a take
                self.irregular += 1
                self._apply(now, _OP_TAKE, slot, 0)

    def _explain(self, now, slot):
        hand = self.hand
        wall = hand.wall
        p = wall.geo.pos_of_slot[slot]
        if not self._pending[p] and not wall.how[p]:
            phase = hand.phase
            if p == wall.head_pos():
                if phase == NEW:
                    self._apply(now, _OP_DEAL, 0, 0)
                elif (phase == PLAY or phase == FINAL) and hand.drawable > 0:
                    seat = self.turn
                    if self._apply(now, _OP_DRAW, seat, 0):
                        self.turn = (seat + 1) & 3
            elif p == wall.tail_pos() and (phase == DEALT or phase == REPLACED):
                self._auto(now)
        q = self._pending[p] - 1
        if q >= 0:                         # the tile an event waits for: arrived
            self._slots[slot] &= _MISSING
            self._pending[p] = 0
            self._left[q] -= 1
            self._flush(now)
            return True
        if wall.how[p] and not self._pending[p]:
            # The core had it gone already (a tile put back by hand, then
            # taken again, that no event claims): the wall count is right.
            self._slots[slot] &= _MISSING
            return True
        return False

    def _back(self, now, slot):
        """A tag in a slot whose tile had gone: a tile put back (§11)."""
        self._slots[slot] |= _PRESENT
        wall = self.hand.wall
        p = wall.geo.pos_of_slot[slot]
        tid = self.rfid.ids[slot]
        if self._pending[p] or not wall.how[p] or tid == UNKNOWN:
            # Not one of the wall's tiles, or one an event still waits for:
            # reported, not counted (it will be looked at again when it goes).
            self.emit("irregular", {"slot": slot, "reason": "a tile the hand does not "
                                    "expect was put back: not counted"})
            return
        wall.put_back(slot)
        wall.tile[p] = tid             # the tile the reader sees there now
        self._apply(now, _OP_BACK, slot, 0)

    # -- events and their published states -----------------------------------

    def _auto(self, now):
        """The events no one declares: flower rounds, and the gold by the tail."""
        hand = self.hand
        if hand.phase == DEALT:
            self._apply(now, _OP_FLOWERS, 0, 0)
        if hand.phase == REPLACED and hand.rules.gold_method == "tail":
            self._apply(now, _OP_GOLD, 0, 0)

    def _apply(self, now, op, arg, kind):
        """Apply one event to the core; queue its state until its tiles are
        seen gone. False (nothing changed) if the rules refuse it."""
        if self.queued == _QUEUE:
            # Full (tiles of eight events not seen go): the oldest goes out
            # as it is, and no longer waits for its tiles. Unless it shows
            # a gold not yet published: a gold is public once its tile lies
            # face up, never earlier. Then the two events after it become
            # one (the later waits for the tiles of both and is published
            # in their place), and the gold goes on waiting for its tile.
            q = self._first
            r = self._rows
            if r[q * _ROW + 7] != _NONE and r[_QUEUE * _ROW + 7] == _NONE:
                a = (q + 1) % _QUEUE
                b = (a + 1) % _QUEUE
                pending = self._pending
                for p in range(len(pending)):
                    if pending[p] == a + 1:
                        pending[p] = b + 1
                    elif pending[p] == q + 1:
                        pending[p] = a + 1
                self._left[b] += self._left[a]
                self._left[a] = self._left[q]
                for j in range(_ROW):           # the oldest's row into the freed one
                    r[a * _ROW + j] = r[q * _ROW + j]
                self._first = a
                self.queued -= 1
            else:
                for p in range(len(self._pending)):
                    if self._pending[p] == q + 1:
                        self._pending[p] = 0
                self._publish(now)
        hand = self.hand
        how = hand.wall.how
        pending = self._pending
        for p in range(len(how)):          # what was gone before the event
            if how[p]:
                pending[p] |= _WAS
        reserve = hand.reserve
        try:
            if op == _OP_DEAL:
                hand.deal()
            elif op == _OP_FLOWERS:
                hand.replace_flowers()
            elif op == _OP_GOLD:
                hand.reveal_gold(arg)            # the dice's sum, or 0: by the tail
            elif op == _OP_DRAW:
                hand.draw(arg)
            elif op == _OP_KONG:
                hand.kong(arg, kind == 1)
            elif op == _OP_TAKE:
                hand.take(arg)
        except Refused:
            for p in range(len(how)):
                pending[p] &= ~_WAS
            return False
        # Into the record: the gold, a reserve change (a kong, a flower
        # quad, both at once) or an irregular take, what was applied, in
        # the core's order, with the head after it (where it fell among
        # the draws). Inline, not a method: one function less in the
        # resident class (docs/heap-idioms.md, 13d).
        rec = self.rec
        if op == _OP_GOLD:
            rec[_R_GOLD_DICE] = arg
            rec[_R_NOTED] |= 1
        if hand.reserve != reserve or op == _OP_TAKE or op == _OP_BACK:
            n = rec[_R_N]
            if n < _R_MAX:
                at = _R_HEAD + 3 * n
                rec[at] = op | kind << 3 | (arg + 1 if op == _OP_KONG or op == _OP_DRAW
                                            else 0) << 4
                rec[at + 1] = arg if op == _OP_TAKE or op == _OP_BACK else hand.reserve
                rec[at + 2] = hand.wall.head_pos() & 255
                rec[_R_N] = n + 1
            else:
                rec[_R_FULL] = 1
            rec[_R_NOTED] |= 1
        q = (self._first + self.queued) % _QUEUE
        self.queued += 1
        left = 0
        for p in range(len(how)):
            w = pending[p]
            if w & _WAS:
                pending[p] = w & ~_WAS
            elif how[p]:
                pending[p] = q + 1
                left += 1
        if op == _OP_TAKE:
            self._pending[hand.wall.geo.pos_of_slot[arg]] = 0
            left -= 1                            # seen gone already
        self._left[q] = left
        self._snapshot(q, op, arg, kind)
        # Its tiles may have been seen gone already (on a side read before
        # the one that explained the event): they arrive now.
        slot_of = hand.wall.geo.slot_of_pos
        for p in range(len(how)):
            if self._pending[p] == q + 1:
                slot = slot_of[p]
                v = self._slots[slot]
                if v & _PRESENT and v & _MISSING >= _CONFIRM:
                    self._slots[slot] = v & _MISSING
                    self._pending[p] = 0
                    self._left[q] -= 1
        self._flush(now)
        return True

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

    def _snapshot(self, q, op, arg, kind):
        hand = self.hand
        wall = hand.wall
        r = self._rows
        at = q * _ROW
        r[at] = op
        r[at + 1] = arg
        r[at + 2] = kind
        r[at + 3] = hand.phase
        r[at + 4] = wall.count
        r[at + 5] = hand.reserve
        r[at + 6] = hand.drawable + 128
        r[at + 7] = hand.gold
        head = wall.head_pos()
        self._stack(at + 8, hand.marker_stack())
        self._stack(at + 10, head >> 1 if head >= 0 else -1)
        self._stack(at + 12, wall.tail_stack())

    def _stack(self, at, i):
        """(seat, k) of draw-order stack i into the row; 255 for none
        (Geometry's ints, not stack_at's tuple: this runs in the control loop)."""
        r = self._rows
        if i < 0:
            r[at] = _NONE
            r[at + 1] = _NONE
            return
        geo = self.hand.wall.geo
        r[at] = geo.seat_of(i)
        r[at + 1] = geo.stack_of(i)

    def _publish(self, now):
        q = self._first
        self._first = (q + 1) % _QUEUE
        self.queued -= 1
        r = self._rows
        at = q * _ROW
        last = _QUEUE * _ROW
        r[last:last + _ROW] = r[at:at + _ROW]
        fields = self._fields(at)
        op = r[at]
        if op == _OP_DRAW or op == _OP_KONG:
            fields["seat"] = r[at + 1]
        if op == _OP_KONG:
            fields["kind"] = "concealed" if r[at + 2] else "exposed"
        if op == _OP_TAKE or op == _OP_BACK:
            fields["slot"] = r[at + 1]
        self.events += 1
        self.emit("hand", fields)
        self._show_row(now, at)

    def _fields(self, at):
        r = self._rows
        return {"n": self.events, "op": _OPS[r[at]],
                "phase": PHASE_NAMES[r[at + 3]],
                "wall": r[at + 4], "reserve": r[at + 5], "drawable": r[at + 6] - 128,
                "gold": None if r[at + 7] == _NONE else tiles.CODES[r[at + 7]],
                "marker": self._pair(at + 8), "head": self._pair(at + 10),
                "tail": self._pair(at + 12)}

    def public(self):
        """The hand's public state as last published (the `hand` request):
        a dict like the `hand` event's, `n` the events published so far,
        `turn` the seat whose head draw comes next; None with no hand."""
        if not self.active or not self.events:
            return None
        out = self._fields(_QUEUE * _ROW)
        out["n"] = self.events
        out["turn"] = self.turn
        return out

    def _pair(self, at):
        r = self._rows
        return None if r[at] == _NONE else [r[at], r[at + 1]]

    # -- the display ----------------------------------------------------------

    def show_again(self, now):
        """Show it all (gold, counts, alert) as last published: at the
        hand's start, and when a display board back from a fault starts
        blank. Never the rules core's own state, which runs ahead of the
        tiles seen gone (a gold turned up in the core before its tile is)."""
        r = self._rows
        for j in range(_SHOWN, _SHOWN + 5):
            r[j] = _REDRAW
        self._show_row(now, _QUEUE * _ROW)

    def _show_row(self, now, at):
        r = self._rows
        d = r[at + 6]
        if d != r[_SHOWN] or r[at + 8] != r[_SHOWN + 1] or r[at + 9] != r[_SHOWN + 2]:
            r[_SHOWN] = d
            r[_SHOWN + 1] = r[at + 8]
            r[_SHOWN + 2] = r[at + 9]
            self.display.show_count(now, d - 128, r[at + 8], r[at + 9])
        if r[at + 7] != r[_SHOWN + 4]:     # the gold, or none (blank)
            r[_SHOWN + 4] = r[at + 7]
            self.display.show_gold(now, r[at + 7])
        phase = r[at + 3]
        alert = panel.ALERT_FINAL if phase == FINAL else panel.ALERT_DRAW if phase == DRAW \
            else panel.ALERT_NONE
        if alert != r[_SHOWN + 3]:
            r[_SHOWN + 3] = alert
            self.display.show_alert(now, alert)
            if alert != panel.ALERT_NONE:
                self.buzzer.beep(now, 300 if alert == panel.ALERT_FINAL else 1000)
