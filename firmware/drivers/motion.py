"""The motors with feedback: the shuffle plate, the four lanes, the four wall
lifters. One module for the three (a module costs the heap ~200 B and its
names; docs/firmware.md, Memory).

* Plate: a PWM motor and a rotation sensor (one pulse per turn).
* Lane: a feed/stack motor and a count sensor (one pulse per tile).
* Lifter: up and down drive outputs, a limit switch at each end.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_add, ticks_diff


# -- plate -------------------------------------------------------------------

_PLATE_STALL = const(11)


class Plate:
    # Set on the instance only when a fault comes: until then the class's
    # value is read, and the instance's dict has no slot to pay for
    # (docs/firmware.md, Memory).
    fault = 0                  # a fault code of firmware/faults.py, 0: none
    detail = None              # the fault's detail for the link

    def __init__(self, hal, motor, sensor, duty, rev_ms, max_ms):
        """`max_ms`: the longest the motor may run (the HAL's guard): the
        build's deadline and a margin."""
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

    def start(self, now):
        if not self.running:
            self.running = True
            self._seen = self.hal.edges(self.sensor)
            self._last = now
            self.hal.duty(self.motor, self.duty)

    def stop(self):
        self.running = False
        self.hal.duty(self.motor, 0)

    def poll(self, now):
        r = self.hal.edges(self.sensor)
        if r != self._seen:
            self.revolutions += r - self._seen
            self._seen = r
            self._last = now
        elif self.running and ticks_diff(now, self._last) > self.deadline_ms:
            self.fault = _PLATE_STALL
            self.detail = {"ms": self.deadline_ms}


# -- lane --------------------------------------------------------------------

_SENSOR_STUCK = const(13)
_STUCK_HIGH_MS = const(500)        # a count pulse lasts ~20 ms; high this long is a fault


class Lane:
    # As Plate's.
    fault = 0                  # a fault code of firmware/faults.py, 0: none
    detail = None              # the fault's detail for the link

    def __init__(self, hal, index, motor, sensor, target, max_ms):
        """`max_ms`: the longest the motor may run (the HAL's guard): the
        build's deadline and a margin."""
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

_LIFT_STUCK = const(12)

UNKNOWN = 0
BOTTOM = 1
RISING = 2
TOP = 3
LOWERING = 4
NAMES = ("unknown", "bottom", "rising", "top", "lowering")
_GUARD_MS = const(1000)            # past a move's deadline, the HAL turns it off itself
_LEAVE_MS = const(600)             # the start switch must open this soon after a move begins


class Lifter:
    # As Plate's.
    fault = 0                  # a fault code of firmware/faults.py, 0: none
    detail = None              # the fault's detail for the link

    def __init__(self, hal, side, up, down, top, bottom, up_ms, down_ms):
        """`up`, `down`: the drive outputs; `top`, `bottom`: the switches."""
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

    def lift(self, now):
        if self.state != TOP:
            self._move(now, self.up, self.down, RISING)

    def lower(self, now):
        if self.state != BOTTOM:
            self._move(now, self.down, self.up, LOWERING)

    def _move(self, now, on, off, state):
        self.hal.write(off, 0)     # never both: one off before the other on
        self.hal.write(on, 1)
        self.state = state
        self._started = now

    def stop(self):
        self.hal.write(self.up, 0)
        self.hal.write(self.down, 0)

    def halt(self):
        """Stop where it is (the end of a technician's jog): no motion is
        expected any more, the switches say where it is."""
        self.stop()
        self.state = UNKNOWN

    def poll(self, now):
        top = self.hal.read(self.top)
        bottom = self.hal.read(self.bottom)
        if top and bottom:
            self._fail(_SENSOR_STUCK, "top and bottom switches both closed")
            return
        state = self.state
        if state == RISING:
            if top:
                self.hal.write(self.up, 0)
                self.state = TOP
            elif bottom and ticks_diff(now, self._started) > _LEAVE_MS:
                self._fail(_LIFT_STUCK, "did not leave the bottom")
            elif ticks_diff(now, self._started) > self.up_ms:
                self._fail(_LIFT_STUCK, "top switch not reached")
        elif state == LOWERING:
            if bottom:
                self.hal.write(self.down, 0)
                self.state = BOTTOM
            elif top and ticks_diff(now, self._started) > _LEAVE_MS:
                self._fail(_LIFT_STUCK, "did not leave the top")
            elif ticks_diff(now, self._started) > self.down_ms:
                self._fail(_LIFT_STUCK, "bottom switch not reached")
        elif state == UNKNOWN or state == BOTTOM or state == TOP:
            self.state = TOP if top else BOTTOM if bottom else UNKNOWN

    def _fail(self, code, detail):
        self.stop()
        self.fault = code
        self.detail = {"side": self.side, "reason": detail}
