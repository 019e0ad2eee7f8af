"""A technician's work on the table, started by a request of a service
session (link/service.py): a jog of one motor, an RFID scan of the walls in
the lanes. The controller's tick runs it to its end
(TableController._service_work: a jog at its deadline or its switch, a
scan side after side), and a fault stops it.

What it changes is the controller's own record of the work, set at boot
in TableController.__init__: `jogging` (the driver jogged), `jog_until`,
`jog` ([name, n, started, count before], filled in place), `scan_side`
(-1: none), `scanned` (a whole scan, nothing moved since).

Memory: like link/service.py, not resident: its one importer loads it for
a request and forgets it with itself, so a table in play carries none of
it (docs/firmware.md, Memory).
"""

from firmware.hal import ticks_add


def busy(ctl):
    """A jog or a scan is running: None, or why no other may start."""
    if ctl.jogging is not None or ctl.scan_side >= 0:
        return "a jog or a scan is running"
    return None


def jog(ctl, now, actuator, n, ms):
    """Run one motor for `ms`: the plate, lane `n`, or lifter `n` up or
    down (the table is still and the arguments are checked: link/service.py).
    None, or why not. The tick stops it at `jog_until`, a lifter at its
    switch first."""
    why = busy(ctl)
    if why:
        return why
    d = ctl.d
    if actuator == "plate":
        j = d.plate
        j.start(now)
    elif actuator == "lane":
        j = d.lanes[n]
        j.jog()
    else:                              # lift_up, lift_down
        j = d.lifters[n]
        # The switch itself, not the lifter's state: right after boot
        # its first poll may not have run yet.
        if ctl.hal.read(j.top if actuator == "lift_up" else j.bottom):
            return "lifter %d is already at its %s switch" % (n, actuator[5:])
        if actuator == "lift_up":      # it stops at its switch, or at the jog's end
            j.lift(now)
        else:
            j.lower(now)
    ctl.jogging = j
    ctl.jog_until = ticks_add(now, ms)
    record = ctl.jog
    record[0] = actuator
    record[1] = n
    record[2] = now
    record[3] = j.revolutions if j is d.plate else j.count if j in d.lanes else 0
    ctl.scanned = False            # a lane may feed tiles, a lifter move walls
    ctl.emit("jog", {"name": actuator, "lane": n, "ms": ms})
    return None


def stop_jog(ctl, now):
    """A running jog ends at the next tick, which says so (`jogged`)."""
    if ctl.jogging is not None:
        ctl.jog_until = now


def scan(ctl, now):
    """Scan the walls in the lanes, side by side (the table is still).
    None, or why not. The UIDs are kept too, for rfid_learn, until the
    learn, the session's close or the table's next move (forget_scan,
    TableController._enter)."""
    why = busy(ctl)
    if why:
        return why
    ctl.scanned = False
    ctl.scan_side = 0
    ctl.d.rfid.raw = bytearray(4 * len(ctl.d.rfid.seen))
    return None


def forget_scan(ctl):
    """The scan's UIDs leave the heap (576 bytes for 144 slots): a learn
    needs a scan again."""
    ctl.d.rfid.raw = None
    ctl.scanned = False
