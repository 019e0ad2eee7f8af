"""The motors with feedback: the shuffle plate, the four lanes, the four wall
lifters. One module for the three (a module costs the heap ~200 B and its
names; docs/firmware.md, Memory).

* Plate: a PWM motor and a rotation sensor (one pulse per turn).
* Lane: a feed/stack motor and a count sensor (one pulse per tile).
* Lifter: up and down drive outputs, a limit switch at each end.

Learned timing (docs/reliability.md): each lifter's rise and
descent and the plate's revolution are timed when they end normally, into
a rolling mean and mean absolute deviation (`learned`, saved with the
counters by the controller). Once learned, a motion past its learned time
+ a small margin is reported once (`slow()`, the `slow` event) and a motion
past its learned time + a larger margin is a fault, never later than the
configured deadline.
"""

from array import array

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_add, ticks_diff
from firmware.faults import LIFT_STUCK as _LIFT_STUCK, PLATE_STALL as _PLATE_STALL, SENSOR_STUCK as _SENSOR_STUCK

# A lifter's states (first: the learned timing below names them). Those
# only tests name are private constants (no interned name); NAMES names
# them all.
UNKNOWN = 0
BOTTOM = 1
_RISING = const(2)
TOP = 3
_LOWERING = const(4)
NAMES = ("unknown", "bottom", "rising", "top", "lowering")


# -- learned timing ----------------------------------------------------------

# Per motion kind k (lifter k rising: 0-3, lifter k-4 lowering: 4-7, the
# plate's revolution: 8), four numbers from learned[_PER * k]: the mean ms
# (_MEAN), the mean absolute deviation ms (_DEV), the samples (_N, up to
# _SAMPLES) and the flags of the motion in progress (_FLAGS); then, at
# _SLOW, a slow motion not yet reported (kind + 1, its ms, the learned ms).
# One array for all: one name, no attribute on the drivers
# (docs/firmware.md, Memory).
_PLATE_K = const(8)
_PER = const(4)                    # numbers per kind: learned[_PER * k + ...]
_MEAN = const(0)
_DEV = const(1)
_N = const(2)
_FLAGS = const(3)
_SLOW = const(36)
_SAMPLES = const(8)                # before this many, only the configured deadlines count
_FULL = const(1)                   # a whole motion, from end to end: it is learned
_WARNED = const(2)                 # its slow warning was posted
learned = array("H", bytes(78))


def _check(k, ms, deadline_ms):
    """Motion k has run `ms`. With `deadline_ms`: the time it must end by
    (the learned time + a margin once learned, never past `deadline_ms`),
    and the slow warning posted once past a smaller margin. Without (0):
    the motion ended normally, `ms` goes into its mean and deviation (the
    plain mean of the first _SAMPLES, then a rolling one of weight
    1/_SAMPLES). The margins: docs/reliability.md, Learned timing."""
    s = learned
    i = _PER * k
    n = s[i + _N]
    if deadline_ms:
        if n < _SAMPLES:
            return deadline_ms
        mean = s[i + _MEAN]
        dev = s[i + _DEV]
        if ms > mean + (mean >> 3) + 4 * dev and not s[i + _FLAGS] & _WARNED:
            s[i + _FLAGS] |= _WARNED
            s[_SLOW] = k + 1
            s[_SLOW + 1] = ms
            s[_SLOW + 2] = mean
        return min(deadline_ms, mean + (mean >> 2) + 8 * dev)
    if n < _SAMPLES:
        n += 1
        s[i + _N] = n
    d = ms - s[i + _MEAN]
    s[i + _MEAN] += (d + (n >> 1)) // n
    if n > 1:                      # the first sample has no deviation
        s[i + _DEV] += ((d if d >= 0 else -d) - s[i + _DEV] + (n >> 1)) // n
    return 0


def slow():
    """The slow motion not yet reported, once: the `slow` event's fields
    (`name`: rising, lowering or plate; `side` for a lifter; `ms`: how long
    it had run; `learned`: its learned ms), or None."""
    s = learned
    k = s[_SLOW] - 1
    if k < 0:
        return None
    s[_SLOW] = 0
    f = {"name": "plate" if k == _PLATE_K else NAMES[_LOWERING if k & 4 else _RISING],
         "ms": s[_SLOW + 1], "learned": s[_SLOW + 2]}
    if k < _PLATE_K:
        f["side"] = k & 3
    return f


# -- plate -------------------------------------------------------------------



class Plate:
    def __init__(self, hal, motor, sensor, duty, rev_ms, max_ms):
        """`max_ms`: the longest the motor may run (the HAL's guard): the
        build's deadline and a margin."""
        self.fault = 0             # a fault code of firmware/faults.py, 0: none
        self.detail = None         # the fault's detail for the link
        self.hal = hal
        self.motor = motor
        self.sensor = sensor               # one pulse per turn
        hal.pwm(motor, max_ms)
        hal.input(sensor)
        self.duty = duty
        self.deadline_ms = 2 * rev_ms      # a missed pulse is tolerated, two are not
        self.running = False
        self.revolutions = 0
        self._seen = 0
        self._last = 0
        for i in range(_PER * _PLATE_K, _SLOW + 1):   # nothing learned yet (the boot restores it)
            learned[i] = 0

    def start(self, now):
        if not self.running:
            self.running = True
            self._seen = self.hal.edges(self.sensor)
            self._last = now
            learned[_PER * _PLATE_K + _FLAGS] = 0  # the first turn starts anywhere: not learned
            self.hal.duty(self.motor, self.duty)

    def stop(self):
        self.running = False
        self.hal.duty(self.motor, 0)

    def poll(self, now):
        r = self.hal.edges(self.sensor)
        if r != self._seen:
            if self.running and not self.fault:
                if learned[_PER * _PLATE_K + _FLAGS] & _FULL:
                    _check(_PLATE_K, ticks_diff(now, self._last), 0)
                learned[_PER * _PLATE_K + _FLAGS] |= _FULL     # the next turn is a whole one
            self.revolutions += r - self._seen
            self._seen = r
            self._last = now
        elif self.running:
            # Learned: a revolution past its learned time warns; two of them
            # (a missed pulse is tolerated) past the larger margin stall.
            ms = ticks_diff(now, self._last)
            limit = 2 * _check(_PLATE_K, ms, self.deadline_ms >> 1)
            if ms > limit:
                self.fault = _PLATE_STALL
                self.detail = {"ms": limit}


# -- lane --------------------------------------------------------------------

_STUCK_HIGH_MS = const(500)        # a count pulse lasts ~20 ms; high this long is a fault


class Lane:
    def __init__(self, hal, index, motor, sensor, target, max_ms):
        """`max_ms`: the longest the motor may run (the HAL's guard): the
        build's deadline and a margin."""
        self.fault = 0             # a fault code of firmware/faults.py, 0: none
        self.detail = None         # the fault's detail for the link
        self.index = index
        self.hal = hal
        self.motor = motor                 # feeds and stacks
        self.sensor = sensor               # one pulse per tile
        hal.output(motor, max_ms)
        hal.input(sensor)
        self.target = target               # tiles that make a full lane: 2 x stacks
        self.count = 0
        self.running = False
        self.last_tile = 0                 # when the last tile was counted
        self._base = 0
        self._high_since = -1

    @property
    def full(self):
        return self.count >= self.target

    def start(self, now):
        """Begin a new wall: count from zero."""
        self._base = self.hal.edges(self.sensor)
        self.count = 0
        self.last_tile = now
        self.running = True
        self.hal.write(self.motor, 1)

    def set_count(self, n, now):
        """The count the RFID reader found in this lane's wall: the count
        sensor missed tiles (it was stuck) or the table was stopped."""
        self._base = self.hal.edges(self.sensor) - n
        self.count = n
        self.last_tile = now
        if n >= self.target:
            self.stop()

    def resume(self, now):
        """Feed again after a stop, keeping the count (a cleared fault)."""
        if not self.full:
            self.last_tile = now           # the idle clock restarts with the motor
            self.running = True
            self.hal.write(self.motor, 1)

    def jog(self):
        """The feed motor on whatever the count (a technician's jog: the
        controller stops it at the jog's deadline)."""
        self.running = True
        self.hal.write(self.motor, 1)

    def stop(self):
        self.running = False
        self.hal.write(self.motor, 0)

    def poll(self, now):
        n = self.hal.edges(self.sensor) - self._base
        if n != self.count:
            self.count = n
            self.last_tile = now
            if self.running and n >= self.target:
                self.stop()                # stop at once: the next tile would overflow
        if self.hal.read(self.sensor):
            if self._high_since < 0:
                self._high_since = now
            elif ticks_diff(now, self._high_since) > _STUCK_HIGH_MS:
                self.fault = _SENSOR_STUCK
                self.detail = {"lane": self.index, "count": self.count, "sensor": "lane_count"}
        else:
            self._high_since = -1

    def idle_ms(self, now):
        return ticks_diff(now, self.last_tile)


# -- lifter ------------------------------------------------------------------


_GUARD_MS = const(1000)            # past a move's deadline, the HAL turns it off itself
_LEAVE_MS = const(600)             # the start switch must open this soon after a move begins


class Lifter:
    def __init__(self, hal, side, up, down, top, bottom, up_ms, down_ms):
        """`up`, `down`: the drive outputs; `top`, `bottom`: the switches."""
        self.fault = 0             # a fault code of firmware/faults.py, 0: none
        self.detail = None         # the fault's detail for the link
        self.side = side
        self.hal = hal
        self.up = up
        self.down = down
        self.top = top
        self.bottom = bottom
        for pin in (up, down):      # the HAL's guard: its deadline and a margin
            hal.output(pin, max(up_ms, down_ms) + _GUARD_MS)
        for pin in (top, bottom):
            hal.input(pin)
        self.up_ms = up_ms
        self.down_ms = down_ms
        self.state = UNKNOWN
        self._started = 0
        for i in range(_PER):       # nothing learned yet (the boot restores it)
            # rising (kind side), lowering (kind side + 4)
            learned[_PER * side + i] = learned[_PER * (side + 4) + i] = 0

    # Asked again on the way (the controller lowers all four at a hand's
    # end), a move goes on, timed from its start.
    def lift(self, now):
        if self.state != TOP and self.state != _RISING:
            self._move(now, self.up, self.down, _RISING)

    def lower(self, now):
        if self.state != BOTTOM and self.state != _LOWERING:
            self._move(now, self.down, self.up, _LOWERING)

    def _move(self, now, on, off, state):
        self.hal.write(off, 0)     # never both: one off before the other on
        self.hal.write(on, 1)
        # A move from the other end is a whole one: its time is learned.
        k = self.side if state == _RISING else self.side + 4
        whole = self.state == (BOTTOM if state == _RISING else TOP)
        learned[_PER * k + _FLAGS] = _FULL if whole else 0
        self.state = state
        self._started = now

    def stop(self):
        self.hal.write(self.up, 0)
        self.hal.write(self.down, 0)
        if self.state == _RISING or self.state == _LOWERING:
            self.state = UNKNOWN   # stopped on the way: nothing to time or learn

    def halt(self):
        """Stop where it is (the end of a technician's jog): no motion is
        expected any more, the switches say where it is."""
        self.stop()
        self.state = UNKNOWN

    def poll(self, now):
        top = self.hal.read(self.top)
        bottom = self.hal.read(self.bottom)
        if top and bottom:
            self._fail(_SENSOR_STUCK, "both_closed")
            return
        state = self.state
        if state == _RISING or state == _LOWERING:
            up = state == _RISING
            k = self.side if up else self.side + 4
            ms = ticks_diff(now, self._started)
            if top if up else bottom:
                self.hal.write(self.up if up else self.down, 0)
                self.state = TOP if up else BOTTOM
                if learned[_PER * k + _FLAGS] & _FULL:
                    _check(k, ms, 0)
            elif ms > _LEAVE_MS and (bottom if up else top):
                self._fail(_LIFT_STUCK, "stayed_bottom" if up else "stayed_top")
            elif ms > _check(k, ms, self.up_ms if up else self.down_ms):
                if up and learned[_PER * k + _FLAGS] & _FULL and learned[_PER * k + _N] >= _SAMPLES:
                    # A whole rise that left the bottom in time and has run
                    # past its learned time: the platform is at its top stop
                    # and the top switch failed. Ending a rise by time is
                    # safe (docs/reliability.md): the rise is finished there.
                    self._fail(_SENSOR_STUCK, "top_open", ms, learned[_PER * k + _MEAN])
                    self.state = TOP
                else:
                    self._fail(_LIFT_STUCK, "top_missed" if up else "bottom_missed")
        elif state != TOP or bottom:
            # At rest the switches say where it is; TOP is kept with the top
            # switch open, until the bottom one closes: a rise that ended by
            # its learned time (a failed top switch) stays finished.
            self.state = TOP if top else BOTTOM if bottom else UNKNOWN

    def _fail(self, code, reason, ms=-1, expected=-1):
        """Stopped by fault `code`; `reason` a word the host says in the
        technician's language (its texts' `reason.*`): both_closed,
        stayed_bottom, stayed_top, top_open (with `ms`, where it stopped,
        and `expected`, the learned time), top_missed, bottom_missed."""
        self.stop()
        self.fault = code
        self.detail = {"side": self.side, "reason": reason}
        if ms >= 0:
            self.detail["ms"] = ms
            self.detail["expected"] = expected
