"""Seat keys (debounced) and the buzzer."""

from firmware.hal import ticks_add, ticks_diff


class Keys:
    def __init__(self, hal, pins, debounce_ms):
        self.hal = hal
        self.inputs = bytes(pins)
        for pin in pins:
            hal.input(pin)
        self.debounce_ms = debounce_ms
        self.stable = bytearray(len(pins))     # debounced level per seat
        self.pressed = bytearray(len(pins))    # 1 = a press not yet taken
        self._raw = bytearray(len(pins))
        self._since = [0] * len(pins)

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

    def take_press(self, seat):
        """True once per press of `seat`'s key."""
        if self.pressed[seat]:
            self.pressed[seat] = 0
            return True
        return False

    def clear(self):
        for seat in range(len(self.pressed)):
            self.pressed[seat] = 0


class Buzzer:
    def __init__(self, hal, pin):
        self.hal = hal
        self.out = pin
        hal.output(pin)
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
