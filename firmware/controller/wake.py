"""A hand the power cut, brought back at boot (docs/reliability.md,
Resuming a hand): the walls in play read, the hand rebuilt from them and
its record (hand.json: firmware/handrec.py checks it), the follower
restored, and the table back in `in_hand` as if nothing had happened; or,
when anything is not certain, `power_lost` with the reason in one word.

    boot: `begin`   -> the state `resuming` (the four sides read, one a
                       tick, through the reader's driver), or power_lost
    tick: `step`    -> reading; then `in_hand`, the dealer's key (a cut
                       before the dice settled), or power_lost

Both enter the state themselves and, once done, forget this module
(what runs now keeps its code to its return).

The rebuild drives the follower itself (controller/follower.py) over the
slots found empty, as it would have explained them one read after
another: the deal and the flower rounds and the gold by the tail (the
tiles are the record's `tiles`, so a flower gone is known as one), the
gold by the dice from the record's roll, head draws in turn, and the
record's kongs and irregular takes where its `heads` place them among the
draws. An event whose tiles are not all gone stays waiting for them, as
it would have. Every slot gone must be explained, every tile still there
must be the record's, and the record the rebuild makes must begin with
the record saved; else the reason:

    record        the record missing, damaged, foreign, of another hand
    record_full   an entry did not fit the follower's buffer
    put_back      a tile was put back in this hand (its tile id changed)
    not_up        the walls were not all up (a cut while lifting)
    reader        the reader failed or did not answer
    unknown_tag   a tag the table does not know on the walls
    mismatch      a tile not the record's, or the record not the rebuild's
    unexplained   a tile gone that no legal take explains (e.g. taken
                  while the power was off)
    not_whole     before the dice: the walls not the ruleset's set

Not resident: loaded at boot for a hand cut, forgotten by the table once
the hand is back or given up (a module's name shorter than 25 characters,
hence this one's: docs/heap-idioms.md, 3).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from binascii import unhexlify

from engine_core.hand import DEALT, FINAL, NEW, PLAY, REPLACED
from firmware import handrec
from firmware.controller import trip
from firmware.drivers import motion
from firmware.faults import POWER_LOST as _POWER_LOST
from firmware.tags import UNKNOWN

_RECORD = const("hand.json")   # the hand's record, as kept.py writes it

_LEVEL_TOP = const(1)
_CONFIRM = const(2)            # the follower's: reads in a row without a tag = gone
_QUEUE = const(8)              # the follower's queue and row size
_ROW = const(14)
_OP_DEAL = const(0)
_OP_TAKE = const(5)
_OP_DRAW = const(3)
_R_NOTED = const(4)            # the follower's rec: the record to be written

# What `begin` found, for `step`: [side being read (4: all read), the
# record (None: before the dice)].
_at = [0, None]


class _Quiet:
    """The follower's display, buzzer and link while it is rebuilt: what
    it publishes then was published before the cut."""

    def show_count(self, now, drawable, seat, stack):
        pass

    def show_gold(self, now, tid):
        pass

    def show_alert(self, now, alert):
        pass

    def beep(self, now, ms):
        pass


def _quiet(name, fields):
    pass


def begin(tc, now, names):
    """At boot, the flag `hand` found: the walls to be read (`resuming`),
    or power_lost and the reason."""
    why = _begin(tc)
    if why:
        gave_up(tc, now, why, names)
    else:
        tc._enter(now, names.index("resuming"))


def gave_up(tc, now, why, names):
    """The hand cut cannot come back (`why`, one word): power_lost, the
    dealer shown, the record as saved, the players finish it by hand; not
    tried again (the flag `gave_up`, to the next start)."""
    ds = tc.dealership
    tc.d.display.show_dealer(now, ds.dealer, ds.streak)
    trip.fault(tc, now, _POWER_LOST, {"reason": why})
    tc.resume_state = names.index("idle")
    tc.follower.rec[_R_NOTED] = 0          # a rebuild given up: the saved record stays
    # With the fault's own save (trip.fault), not between
    # ticks: a fault's writes do not wait.
    try:
        tc.hal.set_flag("gave_up", True)
    except OSError:
        tc.unsaved += 1
    _done()


def _done():
    from firmware.hal import forget
    forget("firmware.controller.wake")


def _begin(tc):
    from firmware.hal import forget
    try:
        rec = handrec.cut_hand(tc.hal.store + _RECORD, tc.cfg.rules, tc.hands)
    except ValueError as e:
        tc.lost = "%s%s" % (tc.lost + "; " if tc.lost else "", e)
        return "record"
    finally:
        forget("firmware.handrec")
        forget("firmware.persist")     # resident no more (kept.py loads it per use)
    if rec is not None:
        if rec["full"]:
            return "record_full"
        for t in rec["takes"]:
            if t[0] == "put_back":
                return "put_back"
    elif not _all_up(tc):
        return "not_up"
    _at[0] = 0
    _at[1] = rec
    return None


def _all_up(tc):
    for lifter in tc.d.lifters:
        if lifter.state != motion.TOP:
            return False
    return True


def step(tc, now, names):
    """Each tick in `resuming` (`names`: the table's NAMES): nothing while
    the sides are read; then the hand back (`in_hand`, or `dealer` before
    the dice) or given up (power_lost)."""
    to = _step(tc, now, names)
    if to is None:
        return
    if type(to) is str:
        gave_up(tc, now, to, names)
    else:
        tc._enter(now, to)
        _done()


def _step(tc, now, names):
    r = tc.d.rfid
    if r.fault:
        return "reader"
    side = _at[0]
    if r.done(_LEVEL_TOP):
        r.release()
        side += 1
        _at[0] = side
    if side < 4:
        if r.state == 0:                   # rfid.IDLE: ask for the next side
            r.scan(now, side, _LEVEL_TOP)
        return None
    rec = _at[1]
    _at[1] = None
    n = len(tc.in_play)
    for slot in range(n):
        if r.seen[slot] and r.ids[slot] == UNKNOWN:
            return "unknown_tag"
    if rec is None:
        return _before_dice(tc, now, r, names)
    return _rebuild(tc, now, r, rec, names)


def _before_dice(tc, now, r, names):
    """A cut between the walls up and the dice settled: the walls whole
    (every slot holds a tile, the ruleset's set), the dealer's key again."""
    have = bytearray(len(tc.cfg.tile_counts))
    for slot in range(len(tc.in_play)):
        if not r.seen[slot]:
            return "not_whole"
        have[r.ids[slot]] += 1
        tc.in_play[slot] = r.ids[slot]
    if have != tc.cfg.tile_counts:
        return "not_whole"
    ds = tc.dealership
    tc.d.display.show_dealer(now, ds.dealer, ds.streak)
    tc.hand_cut = False
    return names.index("dealer")


def _rebuild(tc, now, r, rec, names):
    f = tc.follower
    ids = unhexlify(rec["tiles"])
    n = len(ids)
    for slot in range(n):
        if r.seen[slot] and r.ids[slot] != ids[slot]:
            return "mismatch"
        tc.in_play[slot] = ids[slot]
    a, b = rec["dice"]
    shown = (f.emit, f.display, f.buzzer)
    quiet = _Quiet()
    f.emit = _quiet
    f.display = quiet
    f.buzzer = quiet
    try:
        f.begin(now, rec["dealer"], a, b, tc.in_play)
        for slot in range(n):
            if not r.seen[slot]:
                f._missing[slot] = _CONFIRM
        why = _drive(f, now, r, rec)
    finally:
        f.emit, f.display, f.buzzer = shown
    if why:
        f.end()
        return why
    for slot in range(n):
        if not r.seen[slot] and f._present[slot]:
            f.end()
            return "unexplained"
        f._missing[slot] = 0
    # The record the rebuild made begins with the one saved.
    from firmware import handsave
    from firmware.hal import forget
    made = handsave.record(f, rec["n"], rec["wins_in_row"])
    forget("firmware.handsave")
    for key in ("changes", "heads", "takes"):
        if made[key][:len(rec[key])] != rec[key]:
            f.end()
            return "mismatch"
    if rec["gold"] is not None and made["gold"] != rec["gold"]:
        f.end()
        return "mismatch"
    tc.d.display.show_dealer(now, rec["dealer"], tc.dealership.streak)
    f.buzzer = quiet
    f.show_again(now)                  # no beep: the alert is not new
    f.buzzer = shown[2]
    fields = f._fields(_QUEUE * _ROW)
    fields["n"] = f.events
    del fields["op"]
    tc.emit("hand_resumed", fields)
    # `hand_cut` stays set to the hand's end: nothing moves unasked after a
    # boot (the next set, two tile sets, is built from the hand's end on;
    # the lifters stay where the cut left them till then).
    # The keys are not cleared: a press made while the walls were read (a
    # kong's) is taken by the hand as it would have been.
    tc.gold_rolling = False
    return names.index("in_hand")


def _entries(rec):
    """The record's kongs and takes in the core's order: (op, arg,
    concealed, head after)."""
    out = []
    changes = rec["changes"]
    takes = rec["takes"]
    k = 0
    for i in range(len(changes) + 1):
        while k < len(takes) and takes[k][3] == i:
            out.append(("take", takes[k][1], 0, takes[k][2]))
            k += 1
        if i < len(changes) and changes[i][0] == "kong":
            c = changes[i]
            out.append(("kong", c[1], c[2], rec["heads"][i]))
    return out


def _drive(f, now, r, rec):
    """The follower over the slots found empty; None, or a reason."""
    for e in _entries(rec) + [None]:
        head = -1 if e is None else e[3]
        while _explain(f, now, r, rec, head):
            pass
        if e is None:
            break
        if e[0] == "kong":
            if f.kong(now, e[1], e[2] == 1):
                return "mismatch"
        else:
            slot = e[1]
            if r.seen[slot] or not f._present[slot]:
                return "mismatch"
            f._present[slot] = 0
            f.irregular += 1
            if not f._apply(now, _OP_TAKE, slot, 0):
                return "mismatch"
    return None


def _explain(f, now, r, rec, head):
    """One loss explained as the follower would (the deal, the flower
    rounds and the gold, a head draw short of `head`, -1: any): True if
    an event was applied."""
    hand = f.hand
    wall = hand.wall
    slot_of = wall.geo.slot_of_pos
    phase = hand.phase
    p = wall.head_pos()
    if phase == NEW:
        return p >= 0 and not r.seen[slot_of[p]] and f._apply(now, _OP_DEAL, 0, 0)
    if phase == DEALT or phase == REPLACED:
        gd = rec["gold_dice"]
        if gd and f.wants_gold_dice():
            return f.gold_dice(now, gd) is None
        t = wall.tail_pos()
        if phase == DEALT or hand.rules.gold_method == "tail":
            if t >= 0 and not r.seen[slot_of[t]] and not f._pending[t]:
                f._auto(now)
                return hand.phase != phase
        return False
    if (phase == PLAY or phase == FINAL) and hand.drawable > 0 and p >= 0 \
            and (head < 0 or p < head) and not r.seen[slot_of[p]] and not f._pending[p]:
        seat = f.turn
        if f._apply(now, _OP_DRAW, seat, 0):
            f.turn = (seat + 1) & 3
            return True
    return False
