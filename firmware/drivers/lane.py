"""One lane: a feed/stack motor and a count sensor (one pulse per tile)."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.hal import ticks_diff

_SENSOR_STUCK = const(13)
_STUCK_HIGH_MS = const(500)        # a count pulse lasts ~20 ms; high this long is a fault


class Lane:
    def __init__(self, hal, index, feed_pin, count_pin, target, max_ms):
        """`max_ms`: the longest the motor may run (the HAL's guard): the
        build's deadline and a margin."""
        self.index = index
        self.hal = hal
        self.motor = feed_pin
        self.sensor = count_pin
        hal.output(feed_pin, max_ms)
        hal.input(count_pin)
        self.target = target               # tiles that make a full lane: 2 x stacks
        self.count = 0
        self.running = False
        self.fault = 0
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
        else:
            self._high_since = -1

    def fault_detail(self):
        return {"lane": self.index, "count": self.count, "sensor": "lane_count"}

    def idle_ms(self, now):
        return ticks_diff(now, self.last_tile)
