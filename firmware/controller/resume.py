"""A hand the power cut, brought back at boot (docs/reliability.md,
Resuming a hand): the walls in play read, the hand rebuilt from them and
its record (hand.rec: firmware/controller/record_check.py checks it), the follower
restored, and the table back in `in_hand` as if nothing had happened; or,
when anything is not certain, `power_lost` with the reason in one word.

    boot: `begin`   -> the state `resuming` (the four sides read, one a
                       tick, through the reader's driver), or power_lost
                       (`mid_lift`: the technician's clear finishes the
                       lift and comes back to `resuming`)
    tick: `step`    -> the lift finished, if it was cut; reading; then
                       `in_hand`, the dealer's key (a cut before the dice
                       settled), or power_lost

Both enter the state themselves.

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

    record        the record damaged, changed, foreign, of another hand,
                  not sealed with this table's key, or none kept (a table
                  without a key); before the dice, the walls lifted so
    record_full   an entry did not fit the follower's buffer
    put_back      a tile was put back in this hand (its tile id changed)
    mid_lift      the walls were not all up (a cut while lifting): not a
                  loss; nothing moves unasked after a boot, so the
                  technician's `clear` finishes the lift, and the walls
                  read at the top decide (`not_whole`, `mismatch`...)
    reader        the reader failed or did not answer
    unknown_tag   a tag the table does not know on the walls
    mismatch      a tile not the record's, or the record not the rebuild's
    unexplained   a tile gone that no legal take explains (e.g. taken
                  while the power was off)
    not_whole     before the dice: the walls not the ruleset's set

A cut while the walls rose (`mid_lift`) or while a set was built
(`begin` with no hand: `mid_build`) is resumed on the technician's clear, never
at boot: nothing moves unasked after a boot (docs/reliability.md, A cut
while building or lifting).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from binascii import unhexlify

from engine_core.hand import DEALT, FINAL, NEW, PLAY, REPLACED
from firmware.controller import hand_record, record_check
from firmware.controller import safe_stop
from firmware.controller.follower import REC_NOTED
from firmware.controller.hand_events import (CONFIRM, MISSING, OP_DEAL, OP_DRAW, OP_TAKE,
                                             PRESENT, QUEUE, ROW)
from firmware.controller.saved_state import RECORD_FILE, WALLS_FILE
from firmware.controller.states import DEALER, GAVE_UP_FLAG, IDLE, IN_HAND, NAMES, RESUMING
from firmware.drivers import motion
from firmware.faults import POWER_LOST as _POWER_LOST
from firmware.tags import UNKNOWN

_LEVEL_LANES = const(0)
_LEVEL_TOP = const(1)

# What `begin` found, for `step`: [side being read (4: all read), the
# record (None: before the dice; _BUILD: a build's lanes)].
_BUILD = const(0)
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


def begin(ctl, now):
    """At boot, the flag `hand` (a hand to resume: not given up) or the
    flag `cycle` found: the walls or the lanes to be read (`resuming`),
    or power_lost and the reason."""
    if not ctl.hand_cut or ctl.hal.flag(GAVE_UP_FLAG):
        # A build the power cut (the flag `hand` is set from the lift on).
        # The platforms all at the bottom: the lanes' walls read (`step`);
        # else what the lanes hold cannot be read (platforms on their way
        # down, or a lift not yet written): the lanes tipped, as before.
        why = "restarted during a hand" if ctl.hand_cut else "restarted during a cycle"
        if not ctl.hand_cut:
            for lifter in ctl.devices.lifters:
                if lifter.state != motion.BOTTOM:
                    break
            else:
                _at[0] = 0
                _at[1] = _BUILD
                ctl._enter(now, RESUMING)
                return
        gave_up(ctl, now, why, "idle")
        return
    why = _begin(ctl)
    if why == "mid_lift":
        # Cut while the walls rose: nothing moves unasked after a boot.
        # The technician's clear lifts them the rest of the way and comes
        # back here (`resuming`: `step` reads them at the top); no hand
        # is given up, so a cut again tries again.
        gave_up(ctl, now, why, "resuming")
    elif why:
        gave_up(ctl, now, why)
    else:
        ctl._enter(now, RESUMING)


def gave_up(ctl, now, why, resume=None):
    """The hand cut cannot come back (`why`, one word): power_lost, the
    dealer shown, the record as saved, the players finish it by hand; not
    tried again (the flag `gave_up`, to the next start). With `resume`
    (a state's name), no hand is given up: power_lost with `why` (a word,
    or the fault's whole detail), a clear going back to `resume` (a lift
    or a build the power cut, or a cycle's lanes to tip)."""
    if resume is not None:
        safe_stop.fault(ctl, now, _POWER_LOST, why if type(why) is dict else {"reason": why})
        ctl.resume_state = NAMES.index(resume)
        return
    ds = ctl.dealership
    ctl.devices.display.show_dealer(now, ds.dealer, ds.streak)
    safe_stop.fault(ctl, now, _POWER_LOST, {"reason": why})
    ctl.resume_state = IDLE
    ctl.follower.rec[REC_NOTED] = 0          # a rebuild given up: the saved record stays
    # With the fault's own save (safe_stop.fault), not between
    # ticks: a fault's writes do not wait.
    try:
        ctl.hal.set_flag(GAVE_UP_FLAG, True)
    except OSError:
        ctl.unsaved += 1


def _begin(ctl):
    try:
        rec = record_check.cut_hand(ctl.hand_seal, ctl.hal.store + RECORD_FILE, ctl.cfg.rules,
                                    ctl.hands)
    except ValueError as e:
        ctl.lost = "%s%s" % (ctl.lost + "; " if ctl.lost else "", e)
        return "record"
    if rec is not None:
        if rec["full"]:
            return "record_full"
        for t in rec["takes"]:
            if t[0] == "put_back":
                return "put_back"
    elif not _all_up(ctl):
        return "mid_lift"
    _at[0] = 0
    _at[1] = rec
    return None


def _all_up(ctl):
    for lifter in ctl.devices.lifters:
        if lifter.state != motion.TOP:
            return False
    return True


def step(ctl, now):
    """Each tick in `resuming`: nothing while a lift is finished or the
    sides are read; then the hand back
    (`in_hand`, or `dealer` before the dice), given up (power_lost), or
    a build's lanes read (power_lost `mid_build`, controller/service_work.py's
    clear resumes it)."""
    to = _step(ctl, now)
    if type(to) is str:
        gave_up(ctl, now, to)
    elif to is not None:
        ctl._enter(now, to)


def _step(ctl, now):
    rec = _at[1]
    if rec is None:
        # Before the dice: the walls up first (a lift the power cut,
        # finished after the technician's clear: controller/service_work.py lifts
        # them); a lifter's fault stops the table as in `lifting`.
        for lifter in ctl.devices.lifters:
            if lifter.fault:
                safe_stop.fault(ctl, now, lifter.fault, lifter.detail)
                return None
        if not _all_up(ctl):
            return None
    r = ctl.devices.rfid
    if r.fault:
        if rec == _BUILD:
            gave_up(ctl, now, "reader", "idle")
            return None
        return "reader"
    level = _LEVEL_LANES if rec == _BUILD else _LEVEL_TOP
    side = _at[0]
    if r.done(level):
        r.release()
        side += 1
        _at[0] = side
    if side < 4:
        if r.state == 0:                   # rfid.IDLE: ask for the next side
            r.scan(now, side, level)
        return None
    _at[1] = None
    n = len(ctl.in_play)
    for slot in range(n):
        if r.seen[slot] and r.ids[slot] == UNKNOWN:
            if rec == _BUILD:
                gave_up(ctl, now, "unknown_tag", "idle")
                return None
            return "unknown_tag"
    if rec == _BUILD:
        _build_cut(ctl, now, r, n)
        return None
    if rec is None:
        return _before_dice(ctl, now, r)
    return _rebuild(ctl, now, r, rec)


def _build_cut(ctl, now, r, n):
    """A build's lanes read: power_lost `mid_build` with the tiles each
    lane holds (`count`, by lane: no tile named) and the lanes whose wall
    is not whole from its first tile on in the lanes' stacking order
    (docs/hardware.md: a gap, a tile put by hand; `lane`): those the
    technician empties, the others keep their walls. The clear resumes
    the build (controller/service_work.py: the builder's recount, then
    feeding), and its audit checks the set as ever. `count` and `lane`
    are the link's nested keys (link/protocol.py, NESTED)."""
    per = n // 4
    held = []
    gaps = []
    for side in range(4):
        base = side * per
        k = 0
        for slot in range(base, base + per):
            k += r.seen[slot]
        held.append(k)
        for j in range(k):         # the j-th tile stacked: stack j // 2, bottom first
            if not r.seen[base + (j & ~1) + 1 - (j & 1)]:
                gaps.append(side)
                break
    detail = {"reason": "mid_build", "count": held}
    if gaps:
        detail["lane"] = gaps
    gave_up(ctl, now, detail, "building")


def _before_dice(ctl, now, r):
    """A cut between the lift and the dice settled (the walls up, or
    lifted the rest of the way after the technician's clear): the walls
    whole (every slot holds a tile, the ruleset's set) and, slot for
    slot, the walls the builder's audit lifted (walls.rec, saved_state.py);
    the dealer's key again."""
    have = bytearray(len(ctl.cfg.tile_counts))
    for slot in range(len(ctl.in_play)):
        if not r.seen[slot]:
            return "not_whole"
        have[r.ids[slot]] += 1
        ctl.in_play[slot] = r.ids[slot]
    if have != ctl.cfg.tile_counts:
        return "not_whole"
    n = len(ctl.in_play)
    # None, not this table's, changed or damaged, or another lift's (a cut
    # between the flag `hand` and this file): what was lifted is not known.
    try:
        lifted = ctl.walls_seal.load(ctl.hal.store + WALLS_FILE) if ctl.walls_seal else None
    except ValueError:
        lifted = None
    if lifted is None or len(lifted) != n + 4 or int.from_bytes(
            lifted[n:n + 4], "big") != ctl.lifts:
        return "record"
    for slot in range(n):
        if lifted[slot] != ctl.in_play[slot]:
            return "mismatch"
    ds = ctl.dealership
    ctl.devices.display.show_dealer(now, ds.dealer, ds.streak)
    ctl.hand_cut = False
    return DEALER


def _rebuild(ctl, now, r, rec):
    f = ctl.follower
    ids = unhexlify(rec["tiles"])
    n = len(ids)
    for slot in range(n):
        if r.seen[slot] and r.ids[slot] != ids[slot]:
            return "mismatch"
        ctl.in_play[slot] = ids[slot]
    a, b = rec["dice"]
    shown = (f.emit, f.display, f.buzzer)
    quiet = _Quiet()
    f.emit = _quiet
    f.display = quiet
    f.buzzer = quiet
    try:
        f.begin(now, rec["dealer"], a, b, ctl.in_play)
        for slot in range(n):
            if not r.seen[slot]:
                f._slots[slot] = (f._slots[slot] & PRESENT) | CONFIRM
        why = _drive(f, now, r, rec)
    finally:
        f.emit, f.display, f.buzzer = shown
    if why:
        f.end()
        return why
    for slot in range(n):
        if not r.seen[slot] and f._slots[slot] & PRESENT:
            f.end()
            return "unexplained"
        f._slots[slot] &= PRESENT
    # The record the rebuild made begins with the one saved.
    made = hand_record.make(f, rec["n"], rec["wins_in_row"])
    for key in ("changes", "heads", "takes"):
        if made[key][:len(rec[key])] != rec[key]:
            f.end()
            return "mismatch"
    if rec["gold"] is not None and made["gold"] != rec["gold"]:
        f.end()
        return "mismatch"
    display = ctl.devices.display
    display.show_dealer(now, rec["dealer"], ctl.dealership.streak)
    # The last roll, shown whether or not it was before the cut: a cut
    # between the record's write and the roll's frame shows it first now.
    # A gold roll due and none kept shows no dice: the dealer rolls for it.
    gd = rec["gold_dice"]
    if gd is not None:
        display.show_dice(now, gd[0], gd[1], False)
    elif not f.wants_gold_dice():
        display.show_dice(now, rec["dice"][0], rec["dice"][1], False)
    f.buzzer = quiet
    f.show_again(now)                  # no beep: the alert is not new
    f.buzzer = shown[2]
    fields = f._fields(QUEUE * ROW)
    fields["n"] = f.events
    fields["dice"] = rec["dice"]
    fields["gold_dice"] = gd
    del fields["op"]
    ctl.emit("hand_resumed", fields)
    # `hand_cut` stays set to the hand's end: nothing moves unasked after a
    # boot (the next set, two tile sets, is built from the hand's end on;
    # the lifters stay where the cut left them till then).
    # The keys are not cleared: a press made while the walls were read (a
    # kong's) is taken by the hand as it would have been.
    ctl.gold_rolling = False
    ctl.dice_unshown = False
    return IN_HAND


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
            if r.seen[slot] or not f._slots[slot] & PRESENT:
                return "mismatch"
            f._slots[slot] &= MISSING
            f.irregular += 1
            if not f._apply(now, OP_TAKE, slot, 0):
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
        return p >= 0 and not r.seen[slot_of[p]] and f._apply(now, OP_DEAL, 0, 0)
    if phase == DEALT or phase == REPLACED:
        gd = rec["gold_dice"]
        if gd and f.wants_gold_dice():
            return f.gold_dice(now, gd[0], gd[1]) is None
        t = wall.tail_pos()
        if phase == DEALT or hand.rules.gold_method == "tail":
            if t >= 0 and not r.seen[slot_of[t]] and not f._pending[t]:
                f._auto(now)
                return hand.phase != phase
        return False
    if (phase == PLAY or phase == FINAL) and hand.drawable > 0 and p >= 0 \
            and (head < 0 or p < head) and not r.seen[slot_of[p]] and not f._pending[p]:
        seat = f.turn
        if f._apply(now, OP_DRAW, seat, 0):
            f.turn = (seat + 1) & 3
            return True
    return False
