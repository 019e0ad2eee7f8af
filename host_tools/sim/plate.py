"""The tray and the shuffle plate.

The tray drops its tiles onto the plate as it turns, so the two are one
queue here: `queue[0]` is the next tile a lane picks up. The order is the
seeded shuffle of the set; which tile a lane gets therefore depends on
timing, but timing never depends on which tile it is.

Speed is proportional to the PWM duty: `rev_ms_at_ref` ms per revolution at
duty `ref_duty` (1.0 s at 800; 0.78 s at full duty 1023). The rotation
sensor sees a magnet over an arc of the plate: high for `pulse_ms` at the
reference speed (50 ms), longer when slower, and it stays high if the plate
stops with the magnet over it, as a real Hall sensor would.

The lanes' pick-up rate does not depend on the plate's speed (the lanes'
pick-up wheels set it); the plate only has to turn and hold tiles.
"""

from collections import deque


class Plate:
    ref_duty = 800
    rev_ms_at_ref = 1000
    pulse_ms = 50
    max_duty = 1023

    def __init__(self, table, rng):
        self.table = table
        self.rng = rng
        self.pin = table.config.pin("plate_rotation")
        self.queue = deque()
        self.duty = 0
        self.stalled = False            # plate_stall: blocked, the motor cannot turn it
        # Phase in units of 1/(ref_duty * rev_ms_at_ref) revolution: a duty of
        # d advances it by d units per ms, exactly, in integers.
        self.rev_units = self.ref_duty * self.rev_ms_at_ref
        self.pulse_units = self.ref_duty * self.pulse_ms
        self.phase = rng.randrange(self.pulse_units, self.rev_units)
        self.revolutions = 0
        table.init_input(self.pin, 0)

    @property
    def turning(self):
        return self.duty > 0 and not self.stalled

    def set_duty(self, duty):
        self.duty = max(0, min(self.max_duty, duty))

    def next_time(self, now):
        if not self.turning:
            return None
        if self.phase < self.pulse_units:
            target = self.pulse_units        # the magnet leaves the sensor
        else:
            target = self.rev_units          # the magnet reaches it again
        return now + -(-(target - self.phase) // self.duty)

    def run(self, dt):
        if self.turning:
            self.phase += self.duty * dt

    def fire(self, now):
        if self.phase >= self.rev_units:
            self.phase -= self.rev_units
            self.revolutions += 1
        self.table.emit(self.pin, 1 if self.phase < self.pulse_units else 0)

    # -- tiles -------------------------------------------------------------

    def push(self, tiles):
        """Tiles pushed into the tray: they land on the plate shuffled."""
        tiles = list(tiles)
        self.rng.shuffle(tiles)
        self.queue.extend(tiles)

    def take(self):
        return self.queue.popleft()
