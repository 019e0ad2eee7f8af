"""The shuffle plate: a PWM motor and a rotation sensor (one pulse per turn)."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_diff

_PLATE_STALL = const(11)


class Plate:
    def __init__(self, hal, motor_pin, rotation_pin, duty, rev_ms, max_ms):
        """`max_ms`: the longest the motor may run (the HAL's guard): the
        build's deadline and a margin."""
        self.hal = hal
        self.motor = motor_pin
        self.rotation = rotation_pin
        hal.pwm(motor_pin, max_ms)
        hal.input(rotation_pin)
        self.duty = duty
        self.deadline_ms = 2 * rev_ms      # a missed pulse is tolerated, two are not
        self.running = False
        self.revolutions = 0
        self.fault = 0
        self._seen = 0
        self._last = 0

    def start(self, now):
        if not self.running:
            self.running = True
            self._seen = self.hal.edges(self.rotation)
            self._last = now
            self.hal.duty(self.motor, self.duty)

    def stop(self):
        self.running = False
        self.hal.duty(self.motor, 0)

    def fault_detail(self):
        return {"ms": self.deadline_ms}

    def poll(self, now):
        r = self.hal.edges(self.rotation)
        if r != self._seen:
            self.revolutions += r - self._seen
            self._seen = r
            self._last = now
        elif self.running and ticks_diff(now, self._last) > self.deadline_ms:
            self.fault = _PLATE_STALL
