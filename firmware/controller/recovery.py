"""Clearing a fault: the controller goes back to where the fault stopped
it (TableController.resume_state), once the technician has repaired what
the fault names (docs/faults.md). Raising one is the tick's
(TableController._fault: every output off, the fault saved and told).

    building   the set's build resumes: each wall read again, then fed
    lifting    the move again (the set was counted when it began)
    dealer, rolling, in_hand
               the display shows again what the players need, if it was
               the display that failed
    an audit fault (missing, extra, unknown tile): the set is built again
               from the start, its tiles tipped into the tray

The states are compared by their link names (table.NAMES): this module
keeps no copy of the controller's numbers.

Memory: not resident. link/commands.py imports it for a `clear` request
and forgets it after the answer, so that a table in play carries none of
it (docs/firmware.md, Memory).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.controller import builder
from firmware.controller.table import NAMES
from firmware.faults import AUDIT_FAULTS as _AUDIT_FAULTS, DISPLAY_UNPLUGGED as _DISPLAY_UNPLUGGED

_MARK = const("cycle")                # = table._MARK: set while a cycle runs


def clear(ctl, now):
    """The active fault cleared, the table back where it stopped; None, or
    why not (no active fault)."""
    if NAMES[ctl.state] != "fault":
        return "no active fault"
    code = ctl.fault
    ctl.fault = 0
    ctl.fault_detail = None
    ctl.builder.clear()
    for dev in ctl.d.fault_sources:
        dev.fault = 0
        dev.detail = None      # else the dict stays in the heap until that device's next fault
    resume = NAMES[ctl.resume_state]
    if code == _DISPLAY_UNPLUGGED:
        # Else the frame never ACKed raises the fault again at once; and
        # the board comes back blank: show again what the players need.
        d = ctl.d
        d.display.replugged()
        if resume == "dealer" or resume == "rolling" or resume == "in_hand":
            d.display.show_dealer(now, ctl.dealership.dealer, ctl.dealership.streak)
        if resume == "rolling":
            d.display.show_dice(now, 0, 0, True)
        elif resume == "in_hand":
            d.display.show_dice(now, d.dice.a, d.dice.b, False)
            ctl.follower.show_again(now)
    ctl.emit("cleared", {"code": code, "resume": resume})
    b = ctl.builder            # building now, or the next set during a hand
    if code in _AUDIT_FAULTS:
        # The technician fixed a tile and tipped the lanes into the tray
        # (faults.py): build this set again from the start.
        b.state = builder.EMPTY
    elif b.state == builder.AUDITING:
        b.audit_again(now)
    elif b.state != builder.EMPTY and b.state != builder.READY:
        b.resume(now)              # reads every wall again, then feeds
    if resume == "lifting":
        # The set was lifted and counted when the lift began: only the
        # move again, so that lifts and tiles_fed count it once.
        for lifter in ctl.d.lifters:
            lifter.lift(now)
    elif resume == "idle":
        ctl.hal.set_flag(_MARK, False)
    ctl._enter(now, ctl.resume_state)
    return None
