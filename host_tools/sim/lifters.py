"""The wall lifters: one platform per side, two drive outputs, two switches.

Full travel takes `up_ms` up and `down_ms` down; motion pauses while the
output is off, and stops mechanically at either end (the motor stalls
there if still driven). Each limit switch closes when the platform reaches
its end and opens `switch_lag_ms` after the platform leaves it (the
switch's lever travel). Both outputs on is a short through the H-bridge on
a real driver: here nothing moves and the model counts a firmware error.

Position is an integer in units where up travel is `down_ms` units/ms and
down travel `up_ms` units/ms, so the top is `up_ms * down_ms` and every
crossing time is exact.

When a platform reaches the top, the wall it carries is on the table top
(in play) and the platform comes down empty. A platform that is not rising
and whose bottom switch is closed is at the bottom for the lanes and the
reader (`on_bottom`), even stopped a little way up (a power cut in the
first `switch_lag_ms` of a rise): the switch is all the firmware knows.
"""


class Lifter:
    up_ms = 2500
    down_ms = 2000
    switch_lag_ms = 50

    def __init__(self, table, side):
        self.table = table
        self.side = side
        self.top = self.up_ms * self.down_ms
        self.zone_bottom = self.switch_lag_ms * self.down_ms   # 50 ms of up travel
        self.zone_top = self.switch_lag_ms * self.up_ms         # 50 ms of down travel
        self.pin_top = table.config.pin("lift_top", side)
        self.pin_bottom = table.config.pin("lift_bottom", side)
        self.pos = 0
        self.up = False
        self.down = False
        self.stuck = False              # lift_stuck: blocked, the motor cannot move it
        self.at_top = False             # switch states (before any sensor fault)
        self.at_bottom = True
        self.cycles = 0                 # trips that reached the top
        table.init_input(self.pin_top, 0)
        table.init_input(self.pin_bottom, 1)

    def direction(self):
        if self.stuck or self.up == self.down:
            return 0
        return 1 if self.up else -1

    def on_bottom(self):
        """The platform is at the bottom for the lanes and the reader: at
        its stop, or not rising and still within the bottom switch's lever
        travel (stopped in the first `switch_lag_ms` of a rise: a power cut
        or a stop there). The switch is closed there, and the firmware can
        know no more than the switch (docs/hardware.md: closed = at the
        bottom), so a platform it sees at the bottom is one the lanes stack
        on and the reader reads; otherwise it would never lower it again."""
        return self.pos == 0 or (self.at_bottom and self.direction() <= 0)

    def idle_at_bottom(self):
        """A lane can stack onto this platform."""
        return self.direction() <= 0 and self.on_bottom()

    def set_drive(self, up=None, down=None):
        if up is not None:
            self.up = bool(up)
        if down is not None:
            self.down = bool(down)
        if self.up and self.down:
            self.table.firmware_error("lift_both_on", self.side)

    def next_time(self, now):
        d = self.direction()
        if d > 0 and self.pos < self.top:
            v = self.down_ms
            dist = self.top - self.pos
            if self.at_bottom and self.pos < self.zone_bottom:
                dist = min(dist, self.zone_bottom - self.pos)
        elif d < 0 and self.pos > 0:
            v = self.up_ms
            dist = self.pos
            edge = self.top - self.zone_top
            if self.at_top and self.pos > edge:
                dist = min(dist, self.pos - edge)
        else:
            return None
        return now + -(-dist // v)

    def run(self, dt):
        d = self.direction()
        if d > 0:
            self.pos = min(self.top, self.pos + self.down_ms * dt)
        elif d < 0:
            self.pos = max(0, self.pos - self.up_ms * dt)

    def fire(self, now):
        table = self.table
        if self.pos == 0 and not self.at_bottom:
            self.at_bottom = True
            table.emit(self.pin_bottom, 1)
            table.log_event("lifter", self.side, "bottom")
        elif self.pos >= self.zone_bottom and self.at_bottom:
            self.at_bottom = False
            table.emit(self.pin_bottom, 0)
        if self.pos == self.top and not self.at_top:
            self.at_top = True
            self.cycles += 1
            table.emit(self.pin_top, 1)
            table.log_event("lifter", self.side, "top")
            table.wall_reached_top(self.side, now)
        elif self.pos <= self.top - self.zone_top and self.at_top:
            self.at_top = False
            table.emit(self.pin_top, 0)
