"""Seat keys (debounced, with gestures) and the buzzer.

One key per seat does everything (docs/hardware.md):
    press                 the dealer rolls the dice (taken at once: take_press)
    one short press       exposed kong          } in a hand, known once the
    two short presses     concealed kong        } `double_ms` after the last
    hold >= hold_ms       "I win" (the hand result)   release has passed
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_add, ticks_diff

NONE = const(0)
SINGLE = const(1)
DOUBLE = const(2)
HOLD = const(3)


class Keys:
    def __init__(self, hal, pins, debounce_ms, double_ms, hold_ms):
        """`double_ms`: a second press this soon after a release makes a
        double; `hold_ms`: held this long makes a hold (while still held)."""
        self.hal = hal
        self.double_ms = double_ms
        self.hold_ms = hold_ms
        self.inputs = bytes(pins)
        for pin in pins:
            hal.input(pin)
        self.debounce_ms = debounce_ms
        n = len(pins)
        self.stable = bytearray(n)     # debounced level per seat
        self.pressed = bytearray(n)    # 1 = a press not yet taken
        self.gesture = bytearray(n)    # a finished gesture not yet taken
        self._raw = bytearray(n)
        self._since = [0] * n          # small ints: no allocation on update
        self._down_at = [0] * n
        self._up_at = [0] * n
        self._count = bytearray(n)     # short presses in the gesture so far
        self._held = bytearray(n)      # this press already made a HOLD

    def poll(self, now):
        for seat in range(len(self.inputs)):
            raw = self.hal.read(self.inputs[seat])
            if raw != self._raw[seat]:
                self._raw[seat] = raw
                self._since[seat] = now
            elif raw != self.stable[seat] and ticks_diff(now, self._since[seat]) >= self.debounce_ms:
                self.stable[seat] = raw
                if raw:
                    self.pressed[seat] = 1
                    self._down_at[seat] = now
                elif self._held[seat]:
                    self._held[seat] = 0           # the end of a hold: nothing more
                else:
                    self._count[seat] += 1
                    self._up_at[seat] = now
            self._gesture(seat, now)

    def _gesture(self, seat, now):
        if self.stable[seat]:
            if not self._held[seat] and ticks_diff(now, self._down_at[seat]) >= self.hold_ms:
                self._held[seat] = 1
                self._count[seat] = 0
                self.gesture[seat] = HOLD
        elif self._count[seat] and ticks_diff(now, self._up_at[seat]) >= self.double_ms:
            self.gesture[seat] = SINGLE if self._count[seat] == 1 else DOUBLE
            self._count[seat] = 0

    def take_gesture(self, seat):
        """The seat's finished gesture (SINGLE, DOUBLE, HOLD) once, or NONE."""
        g = self.gesture[seat]
        self.gesture[seat] = NONE
        return g

    def take_press(self, seat):
        """True once per press of `seat`'s key."""
        if self.pressed[seat]:
            self.pressed[seat] = 0
            return True
        return False

    def clear(self):
        """Forget presses and gestures not yet taken (and one in progress)."""
        for seat in range(len(self.pressed)):
            self.pressed[seat] = 0
            self.gesture[seat] = NONE
            self._count[seat] = 0


class Buzzer:
    MAX_ON_MS = 3000               # the HAL's guard: the longest beep is 1 s

    def __init__(self, hal, pin):
        self.hal = hal
        self.out = pin
        hal.output(pin, self.MAX_ON_MS)
        self._until = 0
        self.on = False

    def beep(self, now, ms):
        self.hal.write(self.out, 1)
        self.on = True
        self._until = ticks_add(now, ms)

    def poll(self, now):
        if self.on and ticks_diff(now, self._until) >= 0:
            self.hal.write(self.out, 0)
            self.on = False
