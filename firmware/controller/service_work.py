"""What a technician's request sets the table to do outside its cycle:
a jog of one motor, an RFID scan of the walls in the lanes (the service
requests of link/service.py, which imports this module at a visit's
first request). Raising a fault drops a running jog or scan with the
motors, and a clear sends the table back (controller/safe_stop.py).

A jog or a scan is a `Work`, made by the request that starts it and held
in the controller's `work` while it runs: the tick steps it
(`Work.step`), and it drops itself when it is done, saying so (`jogged`,
`scanned`). The controller's other field a request changes is set at
boot in TableController.__init__: `scanned` (a whole scan, nothing moved
since).
"""

from firmware.controller import safe_stop
from firmware.drivers import motion, rfid
from firmware.hal import ticks_add, ticks_diff


# -- a technician's work -----------------------------------------------------

class Work:
    """A technician's jog or scan while it runs (TableController.work).
    A jog: the driver jogged (`driver`), its deadline, and what `jogged`
    tells: its name, lane or lifter, start, the driver's count before and
    why it ends when its deadline comes (`why`: "time", or "closed" when
    the session's close moved the deadline to now).
    A scan (`driver` None): the side being read, side by side."""

    def __init__(self, driver, until, name, n, at, base):
        self.driver = driver
        self.until = until
        self.name = name
        self.n = n
        self.at = at
        self.base = base
        self.side = 0
        self.why = "time"

    def step(self, ctl, now):
        """The tick's: a jog ends at its deadline, or at its switch for a
        lifter, and says what it did; a scan reads the four sides in
        turn. Done, it leaves the controller (`ctl.work` None)."""
        d = ctl.devices
        j = self.driver
        if j is not None:
            if j.fault:
                # The jogged motor failed (a lifter that did not leave its
                # switch): the table's fault, raised here even when the
                # table is already stopped by one, so that the jog ends
                # with it and says so, not as if it reached its switch.
                safe_stop.fault(ctl, now, j.fault, j.detail)    # the work ends with the motors
                return
            at_switch = j in d.lifters and (j.state == motion.TOP or j.state == motion.BOTTOM)
            if at_switch or ticks_diff(now, self.until) >= 0:
                ctl.work = None
                if j in d.lifters:
                    j.halt()
                else:
                    j.stop()
                count = j.revolutions if j is d.plate else j.count if j in d.lanes else 0
                ctl.emit("jogged", {"name": self.name, "lane": self.n,
                                    "ms": ticks_diff(now, self.at),
                                    "end": "switch" if at_switch else self.why,
                                    "count": count - self.base})
            return
        r = d.rfid
        side = self.side
        if r.fault or (r.state == rfid.DONE and r.level == 0):
            if r.state == rfid.DONE:
                r.release()
                side += 1
            if side < 4 and not r.fault:
                r.scan(now, side, 0)
            else:
                ctl.scanned = side == 4
                tags = 0
                for seen in r.seen:
                    tags += seen
                ctl.emit("scanned", {"sides": side, "tags": tags})
                ctl.work = None
            self.side = side
        elif r.state == rfid.IDLE:
            r.scan(now, side, 0)


def busy(ctl):
    """A jog or a scan is running: None, or why no other may start (the
    reason's word, link/service.py says it)."""
    if ctl.work is not None:
        return "working"
    return None


def jog(ctl, now, actuator, n, ms):
    """Run one motor for `ms`: the plate, lane `n`, or lifter `n` up or
    down (the table is still and the arguments are checked: link/service.py).
    None, or why not: "working" or "at_switch". The tick stops it at its
    deadline, a lifter at its switch first, the motor's fault at once
    (Work.step)."""
    why = busy(ctl)
    if why:
        return why
    d = ctl.devices
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
            return "at_switch"
        if actuator == "lift_up":      # it stops at its switch, or at the jog's end
            j.lift(now)
        else:
            j.lower(now)
    j.fault = 0                    # watched afresh: a fault it latched is the table's already
    j.detail = None
    ctl.work = Work(j, ticks_add(now, ms), actuator, n, now,
                    j.revolutions if j is d.plate else j.count if j in d.lanes else 0)
    ctl.scanned = False            # a lane may feed tiles, a lifter move walls
    ctl.emit("jog", {"name": actuator, "lane": n, "ms": ms})
    return None


def stop_jog(ctl, now):
    """A running jog ends at the next tick, which says so (`jogged`, end
    "closed": cut short, not run to its time). The session's close calls
    it: a jog never outlives the technician's session (Ctrl-C on the PC
    stops the motor); mjctl waits for a jog's end before it closes."""
    w = ctl.work
    if w is not None and w.driver is not None and ticks_diff(now, w.until) < 0:
        w.until = now
        w.why = "closed"


def scan(ctl, now):
    """Scan the walls in the lanes, side by side (the table is still).
    None, or why not. The UIDs are kept too, for rfid_learn, until the
    learn, the session's close or the table's next move (forget_scan,
    TableController._enter)."""
    why = busy(ctl)
    if why:
        return why
    ctl.scanned = False
    ctl.work = Work(None, 0, "", 0, now, 0)
    ctl.devices.rfid.raw = bytearray(4 * len(ctl.devices.rfid.seen))
    return None


def forget_scan(ctl):
    """The scan's UIDs leave the heap (576 bytes for 144 slots): a learn
    needs a scan again."""
    ctl.devices.rfid.raw = None
    ctl.scanned = False
