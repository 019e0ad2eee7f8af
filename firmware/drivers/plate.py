"""The shuffle plate: a PWM motor and a rotation sensor (one pulse per turn)."""

from firmware.hal.ticks import ticks_diff

PLATE_STALL = 11


class Plate:
    def __init__(self, hal, motor_pin, rotation_pin, duty, rev_ms):
        self.motor = hal.pwm(motor_pin)
        self.rotation = hal.input(rotation_pin)
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
            self._seen = self.rotation.rising
            self._last = now
            self.motor.duty(self.duty)

    def stop(self):
        self.running = False
        self.motor.duty(0)

    def fault_detail(self):
        return {"ms": self.deadline_ms}

    def poll(self, now):
        r = self.rotation.rising
        if r != self._seen:
            self.revolutions += r - self._seen
            self._seen = r
            self._last = now
        elif self.running and ticks_diff(now, self._last) > self.deadline_ms:
            self.fault = PLATE_STALL
