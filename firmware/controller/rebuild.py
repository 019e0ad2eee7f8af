"""A hand the power cut, rebuilt from the walls read at boot and its
record (controller/resume.py reads the walls and calls `rebuild`).

The rebuild drives the follower itself (controller/follower.py) over the
slots found empty, as it would have explained them one read after
another: the deal and the flower rounds and the gold by the tail (the
tiles are the record's `tiles`, so a flower gone is known as one), the
gold by the dice from the record's roll, head draws in turn, and the
record's kongs and irregular takes where its `heads` place them among the
draws. An event whose tiles are not all gone stays waiting for them, as
it would have. Every slot gone must be explained, every tile still there
must be the record's, and the record the rebuild makes must begin with
the record saved; else the reason
(resume.py lists them).
Once rebuilt, the table shows what it showed before the cut (the
dealer, the last roll, the counts) and tells the host `hand_resumed`.
"""

from binascii import unhexlify

from engine_core.hand import DEALT, FINAL, NEW, PLAY, REPLACED
from firmware.controller import hand_record
from firmware.controller.hand_events import (CONFIRM, MISSING, OP_DEAL, OP_DRAW, OP_TAKE,
                                             PRESENT, QUEUE, ROW)
from firmware.controller.states import IN_HAND


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


def rebuild(ctl, now, r, rec):
    """The hand of record `rec` rebuilt over the walls `r` read (the
    reader's driver): IN_HAND, the table as before the cut, or a reason."""
    f = ctl.follower
    ids = unhexlify(rec["tiles"])
    n = len(ids)
    for slot in range(n):
        if r.seen[slot] and r.ids[slot] != ids[slot]:
            return "mismatch"
        ctl.in_play[slot] = ids[slot]
    why = _replay(ctl, now, r, rec)
    if why is None:
        for slot in range(n):
            if not r.seen[slot] and f._slots[slot] & PRESENT:
                why = "unexplained"
                break
            f._slots[slot] &= PRESENT
    if why is None and not _made_as_saved(f, rec):
        why = "mismatch"
    if why:
        f.end()
        return why
    _show(ctl, now, rec)
    # `hand_cut` stays set to the hand's end: nothing moves unasked after a
    # boot (the next set, two tile sets, is built from the hand's end on;
    # the lifters stay where the cut left them till then).
    # The keys are not cleared: a press made while the walls were read (a
    # kong's) is taken by the hand as it would have been.
    ctl.gold_rolling = False
    ctl.dice_unshown = False
    return IN_HAND


def _replay(ctl, now, r, rec):
    """The follower begun with the record's roll and driven over the
    slots found empty, quiet; None, or a reason."""
    f = ctl.follower
    a, b = rec["dice"]
    quiet = _Quiet()
    shown = f.outputs(_quiet, quiet, quiet)
    try:
        f.begin(now, rec["dealer"], a, b, ctl.in_play)
        for slot in range(len(ctl.in_play)):
            if not r.seen[slot]:
                f._slots[slot] = (f._slots[slot] & PRESENT) | CONFIRM
        return _drive(f, now, r, rec)
    finally:
        f.outputs(*shown)


def _made_as_saved(f, rec):
    """The record the rebuild made begins with the one saved."""
    made = hand_record.make(f, rec["n"], rec["wins_in_row"])
    for key in ("changes", "heads", "takes"):
        if made[key][:len(rec[key])] != rec[key]:
            return False
    return rec["gold"] is None or made["gold"] == rec["gold"]


def _show(ctl, now, rec):
    """What the table showed before the cut, shown again, and the host
    told (`hand_resumed`)."""
    f = ctl.follower
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
    shown = f.outputs(f.emit, f.display, _Quiet())
    f.show_again(now)                  # no beep: the alert is not new
    f.outputs(*shown)
    fields = f._fields(QUEUE * ROW)
    fields["n"] = f.events
    fields["dice"] = rec["dice"]
    fields["gold_dice"] = gd
    del fields["op"]
    ctl.emit("hand_resumed", fields)


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
