"""A wall lifter: up and down drive outputs, a limit switch at each end."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_add, ticks_diff

_LIFT_STUCK = const(12)
_SENSOR_STUCK = const(13)

UNKNOWN = 0
BOTTOM = 1
RISING = 2
TOP = 3
LOWERING = 4
NAMES = ("unknown", "bottom", "rising", "top", "lowering")
_GUARD_MS = const(1000)            # past a move's deadline, the HAL turns it off itself
_LEAVE_MS = const(600)             # the start switch must open this soon after a move begins


class Lifter:
    def __init__(self, hal, side, up_pin, down_pin, top_pin, bottom_pin, up_ms, down_ms):
        self.side = side
        self.hal = hal
        self.up = up_pin
        self.down = down_pin
        self.top = top_pin
        self.bottom = bottom_pin
        for pin in (up_pin, down_pin):      # the HAL's guard: its deadline and a margin
            hal.output(pin, max(up_ms, down_ms) + _GUARD_MS)
        for pin in (top_pin, bottom_pin):
            hal.input(pin)
        self.up_ms = up_ms
        self.down_ms = down_ms
        self.state = UNKNOWN
        self.fault = 0
        self.detail = ""
        self.cycles = 0
        self._started = 0
        self._deadline = 0

    def lift(self, now):
        if self.state != TOP:
            self._move(now, self.up, self.down, RISING, self.up_ms)

    def lower(self, now):
        if self.state != BOTTOM:
            self._move(now, self.down, self.up, LOWERING, self.down_ms)

    def _move(self, now, on, off, state, ms):
        self.hal.write(off, 0)     # never both: one off before the other on
        self.hal.write(on, 1)
        self.state = state
        self._started = now
        self._deadline = ticks_add(now, ms)

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
                self.cycles += 1
            elif bottom and ticks_diff(now, self._started) > _LEAVE_MS:
                self._fail(_LIFT_STUCK, "did not leave the bottom")
            elif ticks_diff(now, self._deadline) > 0:
                self._fail(_LIFT_STUCK, "top switch not reached")
        elif state == LOWERING:
            if bottom:
                self.hal.write(self.down, 0)
                self.state = BOTTOM
            elif top and ticks_diff(now, self._started) > _LEAVE_MS:
                self._fail(_LIFT_STUCK, "did not leave the top")
            elif ticks_diff(now, self._deadline) > 0:
                self._fail(_LIFT_STUCK, "bottom switch not reached")
        elif state == UNKNOWN or state == BOTTOM or state == TOP:
            self.state = TOP if top else BOTTOM if bottom else UNKNOWN

    def fault_detail(self):
        return {"side": self.side, "reason": self.detail}

    def _fail(self, code, detail):
        self.stop()
        self.fault = code
        self.detail = detail
