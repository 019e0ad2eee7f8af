"""The follower's events between the rules core and the players: each
event's public state queued in a row of a preallocated buffer until its
tiles are seen gone, then published, in the order the events happened,
to the link (the `hand` event, `public`) and to the display. A base of
HandFollower (controller/follower.py), which applies the events and
reads the walls; the tick writes these rows in place and allocates
nothing but the event dict of each published state.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from engine_core import tiles
from engine_core.hand import DRAW, FINAL, PHASE_NAMES, Hand
from firmware.drivers import panel

# By _OP_*: a tuple, not a string split at every event (a list and seven
# strings of garbage each time).
OPS = const(("deal", "replace_flowers", "reveal_gold", "draw", "kong", "take", "put_back"))
OP_DEAL = const(0)
OP_FLOWERS = const(1)
OP_GOLD = const(2)
OP_DRAW = const(3)
OP_KONG = const(4)
OP_TAKE = const(5)
OP_BACK = const(6)

CONFIRM = const(2)            # reads of a slot's side without its tag: a tile gone
# A published state, a row of `_rows` (_snapshot): its fields' offsets.
ROW = const(14)
ROW_OP = const(0)             # the event: _OP_*
ROW_ARG = const(1)            # its seat, or a take's slot
_ROW_KIND = const(2)           # a kong's: 1 concealed
_ROW_PHASE = const(3)
_ROW_WALL = const(4)           # tiles in the wall
_ROW_RESERVE = const(5)
_ROW_DRAWABLE = const(6)       # + 128
_ROW_GOLD = const(7)           # tile id, _NONE: not revealed
_ROW_MARKER = const(8)         # (seat, stack) of the reserve's marker
_ROW_HEAD = const(10)          # (seat, stack) of the next head draw
_ROW_TAIL = const(12)          # (seat, stack) of the tail
QUEUE = const(8)
_NONE = const(255)
_REDRAW = const(254)           # in what is shown: not a value shown, so the next is sent
SHOWN = const(ROW * (QUEUE + 1))   # in _rows, after them: drawable + 128, marker seat, stack, alert, gold
WAS = const(0x80)             # in _pending, while an event is applied: gone before it
PRESENT = const(0x80)         # in _slots: the tile is there (as published)
MISSING = const(0x7F)         # in _slots: reads in a row without its tag


class HandEvents:
    """The queue of published states, and the marks of which tiles each
    waits for; a base of HandFollower, which sets `hand`, `active` and
    `turn`. (The annotations are for the type checker; MicroPython keeps
    nothing of them.)"""
    hand: Hand
    active: bool
    turn: int

    def __init__(self, n, display, buzzer, emit):
        """`n`: the walls' tiles; the display and the buzzer the players
        see and hear; `emit(name, fields)` sends an event to the host."""
        self.display = display
        self.buzzer = buzzer
        self.emit = emit
        self.events = 0            # states published this hand
        self.queued = 0
        self._first = 0            # ring index of the oldest queued event
        # The queue's rows, then the last state published (`public`, and
        # what a display shows again), then what the display shows (5
        # bytes at SHOWN), in one buffer the tick writes in place.
        self._rows = bytearray(SHOWN + 5)
        self._left = bytearray(QUEUE)       # tiles of each queued event not yet seen gone
        # By position: queue index + 1 of its event (and WAS while one is
        # applied). By slot: PRESENT | reads in a row without its tag.
        self._pending = bytearray(n)
        self._slots = bytearray(n)


    def outputs(self, emit, display, buzzer):
        """Where the published states go from now on: `emit`, the display
        and the buzzer (a hand rebuilt after a power cut publishes to
        quiet ones: controller/rebuild.py); the ones they replace."""
        was = (self.emit, self.display, self.buzzer)
        self.emit, self.display, self.buzzer = emit, display, buzzer
        return was
    def _make_room(self, now):
        """The queue is full (tiles of eight events not seen go): the
        oldest goes out as it is, and no longer waits for its tiles. Unless
        it shows a gold not yet published: a gold is public once its tile
        lies face up, never earlier. Then the two events after it become
        one (the later waits for the tiles of both and is published in
        their place), and the gold goes on waiting for its tile."""
        q = self._first
        r = self._rows
        pending = self._pending
        if r[q * ROW + _ROW_GOLD] != _NONE and r[QUEUE * ROW + _ROW_GOLD] == _NONE:
            a = (q + 1) % QUEUE
            b = (a + 1) % QUEUE
            for p in range(len(pending)):
                if pending[p] == a + 1:
                    pending[p] = b + 1
                elif pending[p] == q + 1:
                    pending[p] = a + 1
            self._left[b] += self._left[a]
            self._left[a] = self._left[q]
            for j in range(ROW):           # the oldest's row into the freed one
                r[a * ROW + j] = r[q * ROW + j]
            self._first = a
            self.queued -= 1
        else:
            for p in range(len(pending)):
                if pending[p] == q + 1:
                    pending[p] = 0
            self._publish(now)

    def _enqueue(self, op, arg, kind):
        """The event's state queued, waiting for the tiles it took: those
        gone now and not before. Tiles already seen gone (on a side read
        before the one that explained the event) arrive at once."""
        hand = self.hand
        how = hand.wall.how
        pending = self._pending
        q = (self._first + self.queued) % QUEUE
        self.queued += 1
        left = 0
        for p in range(len(how)):
            w = pending[p]
            if w & WAS:
                pending[p] = w & ~WAS
            elif how[p]:
                pending[p] = q + 1
                left += 1
        if op == OP_TAKE:
            pending[hand.wall.geo.pos_of_slot[arg]] = 0
            left -= 1                            # seen gone already
        self._left[q] = left
        self._snapshot(q, op, arg, kind)
        slot_of = hand.wall.geo.slot_of_pos
        for p in range(len(how)):
            if pending[p] == q + 1:
                slot = slot_of[p]
                v = self._slots[slot]
                if v & PRESENT and v & MISSING >= CONFIRM:
                    self._slots[slot] = v & MISSING
                    pending[p] = 0
                    self._left[q] -= 1

    def _snapshot(self, q, op, arg, kind):
        hand = self.hand
        wall = hand.wall
        r = self._rows
        at = q * ROW
        r[at + ROW_OP] = op
        r[at + ROW_ARG] = arg
        r[at + _ROW_KIND] = kind
        r[at + _ROW_PHASE] = hand.phase
        r[at + _ROW_WALL] = wall.count
        r[at + _ROW_RESERVE] = hand.reserve
        r[at + _ROW_DRAWABLE] = hand.drawable + 128
        r[at + _ROW_GOLD] = hand.gold
        head = wall.head_pos()
        self._stack(at + _ROW_MARKER, hand.marker_stack())
        self._stack(at + _ROW_HEAD, head >> 1 if head >= 0 else -1)
        self._stack(at + _ROW_TAIL, wall.tail_stack())

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
        self._first = (q + 1) % QUEUE
        self.queued -= 1
        r = self._rows
        at = q * ROW
        last = QUEUE * ROW
        r[last:last + ROW] = r[at:at + ROW]
        fields = self._fields(at)
        op = r[at + ROW_OP]
        if op == OP_DRAW or op == OP_KONG:
            fields["seat"] = r[at + ROW_ARG]
        if op == OP_KONG:
            fields["kind"] = "concealed" if r[at + _ROW_KIND] else "exposed"
        if op == OP_TAKE or op == OP_BACK:
            fields["slot"] = r[at + ROW_ARG]
        self.events += 1
        self.emit("hand", fields)
        self._show_row(now, at)

    def _fields(self, at):
        r = self._rows
        return {"n": self.events, "op": OPS[r[at + ROW_OP]],
                "phase": PHASE_NAMES[r[at + _ROW_PHASE]],
                "wall": r[at + _ROW_WALL], "reserve": r[at + _ROW_RESERVE], "drawable": r[at + _ROW_DRAWABLE] - 128,
                "gold": None if r[at + _ROW_GOLD] == _NONE else tiles.CODES[r[at + _ROW_GOLD]],
                "marker": self._pair(at + _ROW_MARKER), "head": self._pair(at + _ROW_HEAD),
                "tail": self._pair(at + _ROW_TAIL)}

    def public(self):
        """The hand's public state as last published (the `hand` request):
        a dict like the `hand` event's, `n` the events published so far,
        `turn` the seat whose head draw comes next; None with no hand."""
        if not self.active or not self.events:
            return None
        out = self._fields(QUEUE * ROW)
        out["n"] = self.events
        out["turn"] = self.turn
        return out

    def _pair(self, at):
        r = self._rows
        return None if r[at] == _NONE else [r[at], r[at + 1]]

    def show_again(self, now):
        """Show it all (gold, counts, alert) as last published: at the
        hand's start, and when a display board back from a fault starts
        blank. Never the rules core's own state, which runs ahead of the
        tiles seen gone (a gold turned up in the core before its tile is)."""
        r = self._rows
        for j in range(SHOWN, SHOWN + 5):
            r[j] = _REDRAW
        self._show_row(now, QUEUE * ROW)

    def _show_row(self, now, at):
        r = self._rows
        d = r[at + _ROW_DRAWABLE]
        if d != r[SHOWN] or r[at + _ROW_MARKER] != r[SHOWN + 1] or r[at + _ROW_MARKER + 1] != r[SHOWN + 2]:
            r[SHOWN] = d
            r[SHOWN + 1] = r[at + _ROW_MARKER]
            r[SHOWN + 2] = r[at + _ROW_MARKER + 1]
            self.display.show_count(now, d - 128, r[at + _ROW_MARKER], r[at + _ROW_MARKER + 1])
        if r[at + _ROW_GOLD] != r[SHOWN + 4]:     # the gold, or none (blank)
            r[SHOWN + 4] = r[at + _ROW_GOLD]
            self.display.show_gold(now, r[at + _ROW_GOLD])
        phase = r[at + _ROW_PHASE]
        alert = panel.ALERT_FINAL if phase == FINAL else panel.ALERT_DRAW if phase == DRAW \
            else panel.ALERT_NONE
        if alert != r[SHOWN + 3]:
            r[SHOWN + 3] = alert
            self.display.show_alert(now, alert)
            if alert != panel.ALERT_NONE:
                self.buzzer.beep(now, 300 if alert == panel.ALERT_FINAL else 1000)
