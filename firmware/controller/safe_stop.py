"""A fault raised: the table stopped safe, the fault counted, logged and
told (docs/reliability.md); and cleared, the table back where it
stopped. The cycle's tick raises them (table.py: a driver's fault, the
builder's, the HAL's output guard, a power cut found at boot) and
main.run a bug in the loop (`crashed`); the `clear` request clears one
(link/commands.py); the log is the counters file's
(controller/saved_state.py).

Raised (`fault`):

    every output off, a technician's jog or scan dropped, the builder and
    the lifters stopped; the state the fault stopped (where a clear goes
    back to: `resume_state`); the fault, its detail and time; its count;
    the log's entry saved; FAULT entered; the `fault` event

A cleared fault sends the table back to where the fault stopped it
(TableController.resume_state):

    building   the set's build resumes: each wall read again, then fed
               (after a power cut too: power_lost `mid_build`)
    lifting    the move again (the set was counted when it began)
    resuming   a lift the power cut (power_lost `mid_lift`): the move
               again, then the walls read at the top (controller/resume.py)
    dealer, rolling, in_hand
               the display shows again what the players need, if it was
               the display that failed
    an audit fault (missing, extra, unknown tile): the set is built again
               from the start, its tiles tipped into the tray
"""

from firmware import faults
from firmware.controller import builder
from firmware.controller.states import BOOT, CYCLE_FLAG, FAULT, IDLE, NAMES
from firmware.faults import (AUDIT_FAULTS as _AUDIT_FAULTS, DISPLAY_UNPLUGGED as _DISPLAY_UNPLUGGED,
                             FIRMWARE_ERROR as _FIRMWARE_ERROR, POWER_LOST as _POWER_LOST)


def fault(ctl, now, code, detail):
    """Fault `code` raised with its `detail` (a dict of public facts, or
    None)."""
    ctl.hal.all_off()
    ctl.work = None                   # a jog or a scan ends with the motors
    ctl.builder.stop()
    for lifter in ctl.devices.lifters:
        lifter.stop()
    if ctl.state != FAULT:
        ctl.resume_state = ctl.state if ctl.state != BOOT else IDLE
    ctl.fault = code
    ctl.fault_detail = detail
    ctl.fault_at = now
    counts = ctl.fault_counts
    if code < len(counts) and counts[code] < 255:
        counts[code] += 1
    ctl._save([now, code, faults.name_of(code), detail or {}])
    name = faults.name_of(code)
    ctl._enter(now, FAULT)
    ctl.emit("fault", {"code": code, "name": name, "detail": detail or {}})


def crashed(ctl, now, exc):
    """A bug raised in the control loop (main.run): the safe state, and the
    bug on the link."""
    ctl.hal.all_off()
    fault(ctl, now, _FIRMWARE_ERROR, {"reason": "%s: %s" % (type(exc).__name__, exc)})


def clear(ctl, now):
    """The active fault cleared, the table back where it stopped; None, or
    why not (no active fault)."""
    if NAMES[ctl.state] != "fault":
        return "no active fault"
    code = ctl.fault
    ctl.fault = 0
    ctl.fault_detail = None
    ctl.builder.clear()
    for dev in ctl.devices.fault_sources:
        dev.fault = 0
        dev.detail = None      # else the dict stays in the heap until that device's next fault
    resume = NAMES[ctl.resume_state]
    if code == _DISPLAY_UNPLUGGED:
        # Else the frame never ACKed raises the fault again at once; and
        # the board comes back blank: show again what the players need.
        d = ctl.devices
        d.display.replugged()
        if resume == "dealer" or resume == "rolling" or resume == "in_hand":
            d.display.show_dealer(now, ctl.dealership.dealer, ctl.dealership.streak)
        # Rolling dice show no faces: they are public once they settle
        # (a roll for the gold during the hand too).
        if resume == "rolling" or (resume == "in_hand" and d.dice.rolling):
            d.display.show_dice(now, 0, 0, True)
        elif resume == "in_hand":
            d.display.show_dice(now, d.dice.a, d.dice.b, False)
        if resume == "in_hand":
            ctl.follower.show_again(now)
    ctl.emit("cleared", {"code": code, "resume": resume})
    b = ctl.builder            # building now, or the next set during a hand
    if code in _AUDIT_FAULTS:
        # The technician fixed a tile and tipped the lanes into the tray
        # (faults.py): build this set again from the start.
        b.state = builder.EMPTY
    elif b.state == builder.AUDITING:
        b.audit_again(now)
    elif (b.state != builder.EMPTY and b.state != builder.READY) or (
            code == _POWER_LOST and resume == "building"):
        # Reads every wall again, then feeds; a build the power cut
        # (power_lost `mid_build`, its platforms at the bottom) so too:
        # the lanes keep what they hold.
        b.resume(now)
    if resume == "lifting" or resume == "resuming":
        # The set was lifted and counted when the lift began: only the
        # move again, so that lifts and tiles_fed count it once. A lift the
        # power cut (power_lost `mid_lift`) goes on so too, and is read
        # at the top (controller/resume.py); lifters at the top stay there.
        for lifter in ctl.devices.lifters:
            lifter.lift(now)
    elif resume == "idle":
        ctl.hal.set_flag(CYCLE_FLAG, False)
    ctl._enter(now, ctl.resume_state)
    return None
