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

The hand itself is rebuilt by controller/rebuild.py, which says how.
What cannot come back falls back with its reason, in one word:

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

from firmware.controller import rebuild, record_check, safe_stop
from firmware.controller.follower import REC_NOTED
from firmware.controller.saved_state import RECORD_FILE, WALLS_FILE
from firmware.controller.states import DEALER, GAVE_UP_FLAG, IDLE, NAMES, RESUMING
from firmware.drivers import motion
from firmware.faults import POWER_LOST as _POWER_LOST
from firmware.tags import UNKNOWN

_LEVEL_LANES = const(0)
_LEVEL_TOP = const(1)

# What `begin` found, for `step`: [side being read (4: all read), the
# record (None: before the dice; _BUILD: a build's lanes)].
_BUILD = const(0)
_at = [0, None]


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
    a build's lanes read (power_lost `mid_build`, controller/safe_stop.py's
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
        # finished after the technician's clear: controller/safe_stop.py lifts
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
    return rebuild.rebuild(ctl, now, r, rec)


def _build_cut(ctl, now, r, n):
    """A build's lanes read: power_lost `mid_build` with the tiles each
    lane holds (`count`, by lane: no tile named) and the lanes whose wall
    is not whole from its first tile on in the lanes' stacking order
    (docs/hardware.md: a gap, a tile put by hand; `lane`): those the
    technician empties, the others keep their walls. The clear resumes
    the build (controller/safe_stop.py: the builder's recount, then
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
