"""A table top for HandFollower tests, on both interpreters.

`Top` stands in for the RFID reader's level 1 (the walls in play) and the
devices the follower talks to: tiles are taken from or put back in slots,
and `read_rounds(n)` lets the follower read every side n times (a reader
answers each request at once here: the real timing is the hw_tests' job).
The display and buzzer record what they were told; events go to `events`.
"""

from engine_core import tiles
from engine_core.hand import Hand
from engine_core.replay import PUBLIC_KEYS, apply, from_wire, state
from engine_core.rulesets import load
from engine_core.tests.walls import arrange
from firmware.controller.follower import HandFollower

IDLE, WAITING, DONE = 0, 1, 2


def reserve_changes(hand, events, after=None):
    """Apply the replay's `events` to `hand`: the reserve changes they
    make, as the hand's record lists them (firmware/controller/hand_record.py): [op,
    seat or None, concealed 0/1, R after]. `after(hand)` is called after
    each event."""
    out = []
    for ev in events:
        before = hand.reserve
        apply(hand, ev)
        if hand.reserve != before:
            seated = ev["op"] in ("kong", "draw")
            out.append([ev["op"], ev["seat"] if seated else None,
                        1 if ev.get("kind") == "concealed" else 0, hand.reserve])
        if after is not None:
            after(hand)
    return out


class FakeReader:
    fault = 0                            # as the driver's: set when a read times out
    def __init__(self, n):
        self.n = n
        self.state = IDLE
        self.level = 0
        self.side = 0
        self.seen = bytearray(n)
        self.ids = bytearray(n)          # tile id per slot, as the driver looks it up
        self.present = bytearray(n)      # what is really on the table top
        self.drop = -1                   # a slot the next answer leaves out (a glitch)
        self.requests = 0

    def scan(self, now, side, level):
        self.requests += 1
        self.side = side
        self.level = level
        per = self.n // 4
        for s in range(side * per, (side + 1) * per):
            self.seen[s] = self.present[s] and s != self.drop
        if side * per <= self.drop < (side + 1) * per:
            self.drop = -1
        self.state = DONE                # answered at once

    def done(self, level):
        return self.state == DONE and self.level == level

    def release(self):
        if self.state == DONE:
            self.state = IDLE


class Recorder:
    def __init__(self):
        self.calls = []

    def show_gold(self, now, tid):
        self.calls.append(("gold", tid))

    def show_count(self, now, drawable, seat, stack):
        self.calls.append(("count", drawable, seat, stack))

    def show_alert(self, now, alert):
        self.calls.append(("alert", alert))

    def beep(self, now, ms):
        self.calls.append(("beep", ms))

    def last(self, kind):
        for c in reversed(self.calls):
            if c[0] == kind:
                return c
        return None


class NotReading:
    def reading(self):
        return False


class Top:
    GRACE = 5000

    def __init__(self, ruleset="fuzhou144", dealer=0, dice=(3, 4), placed=None):
        self.rules = load(ruleset)
        self.dealer = dealer
        self.dice = list(dice)
        self.codes = arrange(self.rules, dealer, dice[0] + dice[1], placed or {})
        n = len(self.codes)
        self.ids = bytearray(n)
        self.reader = FakeReader(n)
        for slot in range(n):
            self.ids[slot] = tiles.tile_id(self.codes[slot])
            self.reader.ids[slot] = self.ids[slot]
            self.reader.present[slot] = 1
        self.display = Recorder()
        self.buzzer = Recorder()
        self.events = []
        self.follower = HandFollower(self.rules, self.reader, NotReading(),
                                     self.display, self.buzzer, self.emit, self.GRACE)
        self.now = 0
        # The rules' own view, to know which slots each event takes.
        self.shadow = Hand(self.rules, dealer, dice[0] + dice[1], self.ids)
        self.follower.begin(0, dealer, dice[0], dice[1], self.ids)
        self.follower.show_again(0)             # as the table does once the record is written

    def emit(self, name, fields):
        self.events.append((name, fields))

    def states(self):
        return [f for name, f in self.events if name == "hand"]

    # -- the players -----------------------------------------------------------

    def take(self, slot):
        self.reader.present[slot] = 0

    def put_back(self, slot):
        self.reader.present[slot] = 1

    def play(self, ev):
        """The players do `ev` (a §13 event) on the table: its tiles leave
        the table top (a kong's key is pressed first). Returns the slots."""
        how = bytearray(self.shadow.wall.how)
        apply(self.shadow, ev)
        if ev["op"] == "kong":
            why = self.follower.kong(self.now, ev["seat"], ev["kind"] == "concealed")
            assert why is None, why
        geo = self.shadow.wall.geo
        slots = [geo.slot_of_pos[p] for p in range(len(how))
                 if self.shadow.wall.how[p] and not how[p]]
        for s in slots:
            self.take(s)
        return slots

    def read_rounds(self, n=1, step_ms=10):
        """n reads of every side: each step reads the answer to the last
        request (this reader answers at once) and asks for the next side."""
        for _ in range(4 * n):
            self.now += step_ms
            self.follower.step(self.now, True)

    def wait(self, ms):
        end = self.now + ms
        while self.now < end:
            self.now += 100
            self.follower.step(self.now, True)

    def replayed(self, events):
        """engine_core.replay's states for these events on the same walls."""
        hand = Hand(self.rules, self.dealer, self.dice[0] + self.dice[1], self.ids)
        out = []
        for ev in events:
            apply(hand, ev)
            out.append(state(hand))
        return out


def same(published, replayed):
    a = [from_wire(s) for s in published]
    b = [dict((k, r[k]) for k in PUBLIC_KEYS) for r in replayed]
    return a == b


# The hand's opening, as the players play it: the deal, the flower
# rounds, the gold turned up.
OPENING = [{"op": "deal"}, {"op": "replace_flowers"}, {"op": "reveal_gold"}]


def opened(**kw):
    """A table top (`Top(**kw)`) whose hand has opened: each event of
    OPENING played and read twice."""
    top = Top(**kw)
    for ev in OPENING:
        top.play(ev)
        top.read_rounds(2)
    return top
