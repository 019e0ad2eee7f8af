"""Electronic dice: two fair faces from the hardware RNG, shown rolling for
`roll_ms` and then still. The fairness (rejection sampling) is engine_core's."""

from engine_core.dice import roll
from firmware.hal import ticks_add, ticks_diff


class Dice:
    def __init__(self, rand, roll_ms):
        self.rand = rand
        self.roll_ms = roll_ms
        self.a = 0
        self.b = 0
        self.rolling = False
        self._until = 0

    def start(self, now):
        """Roll: the faces are decided now, shown when the roll ends."""
        self.a, self.b = roll(self.rand)
        self.rolling = True
        self._until = ticks_add(now, self.roll_ms)

    def done(self, now):
        """True once, when the rolling display ends."""
        if self.rolling and ticks_diff(now, self._until) >= 0:
            self.rolling = False
            return True
        return False
