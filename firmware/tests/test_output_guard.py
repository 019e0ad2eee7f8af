"""The HAL's guard on every output (firmware/hal/__init__.py, HalCommon),
on both interpreters: an output left on past its limit is turned off by
the HAL itself and the controller stops with output_timeout; an output
that is switched off in time, or on again later, never trips it."""

from firmware import config, tags
from firmware.controller.table import TableController
from firmware.devices import Devices
from firmware.hal import HalCommon
from firmware.fakes.hal import FIRMWARE_DIR, QuietBoard

OUTPUT_TIMEOUT = 43


class GuardedPins(QuietBoard, HalCommon):
    """A HAL backend's part the guard needs: outputs, a clock, `_off`; and
    enough of the rest of the interface for the controller."""

    def __init__(self):
        self.now = 0
        self.out = {}
        self.level = {}
        self.turned_off = []
        HalCommon.__init__(self, b"")

    def output(self, pin, max_ms):
        self.out[pin] = 0
        self._guard(pin, max_ms)

    pwm = output

    def input(self, pin):
        self.level[pin] = 0

    def write(self, pin, v):
        self.out[pin] = v
        self._switched(pin, v, self.now)

    duty = write

    def _off(self, pin):
        self.turned_off.append(pin)
        self.write(pin, 0)

    def tick(self, t):
        """What a backend's sleep_until does first: the guard's look."""
        self.now = t
        self._watch(t)

    def limit_of(self, pin):
        g = self._g                # (pin, max_ms, on since) per output
        for i in range(0, 3 * self._g_n, 3):
            if g[i] == pin:
                return g[i + 1]
        return None

    def read(self, pin):
        return self.level.get(pin, 0)

    def edges(self, pin):
        return 0

    def uart(self, n, tx, rx, rxbuf):
        return self

    def readinto(self, buf):
        return 0

    def all_off(self):
        for pin in self.out:
            self.write(pin, 0)


def test_an_output_left_on_past_its_limit_is_turned_off_by_the_hal():
    hal = GuardedPins()
    hal.output(5, 1000)
    hal.output(6, 200)
    hal.write(6, 1)                        # on at 0, off in time
    hal.tick(150)
    hal.write(6, 0)
    hal.tick(500)
    assert hal.tripped == -1 and hal.turned_off == []
    hal.write(5, 1)                        # on at 500: may stay on until 1500
    hal.tick(1500)
    assert hal.tripped == -1 and hal.out[5] == 1
    hal.tick(1510)                         # the tick after the limit
    assert hal.tripped == 5 and hal.out[5] == 0 and hal.turned_off == [5]
    assert hal.out[6] == 0


def test_on_again_after_off_starts_its_time_again():
    hal = GuardedPins()
    hal.output(7, 500)
    for start in (0, 400, 800, 1200):      # 300 ms runs, 100 ms apart
        hal.tick(start)
        hal.write(7, 1)
        hal.tick(start + 300)
        hal.write(7, 0)
    hal.tick(2000)
    assert hal.tripped == -1
    hal.write(7, 800)                      # a PWM duty is "on" too
    hal.tick(2501)
    assert hal.tripped == 7 and hal.out[7] == 0


def test_too_many_outputs_is_an_error_not_a_silent_miss():
    hal = GuardedPins()
    for pin in range(16):                  # a table has 14 outputs; the guard holds 16
        hal.output(pin, 100)
    try:
        hal.output(40, 100)
    except ValueError as e:
        assert "outputs" in str(e)
    else:
        assert False, "a seventeenth output was accepted unguarded"


def test_the_controller_stops_everything_when_the_guard_trips():
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    hal = GuardedPins()
    for pin in cfg.pins["lift_bottom"]:
        hal.level[pin] = 1                 # the platforms are down
    events = []
    ctl = TableController(hal, cfg, Devices(hal, cfg, tags.load(FIRMWARE_DIR + "/tags.txt")),
                          lambda name, fields: events.append((name, fields)))
    ctl.boot(0)
    lane = ctl.devices.lanes[2]
    limit = hal.limit_of(lane.motor)
    assert limit > cfg.timings["build_max_ms"]        # the build's own deadline comes first
    hal.write(lane.motor, 1)               # a bug: the motor on while the table is idle
    t = 10
    while t <= limit + 20:
        hal.tick(t)
        ctl.step(t)
        t += 10
        if ctl.fault:
            break
    assert ctl.fault == OUTPUT_TIMEOUT and t > limit
    assert [f for n, f in events if n == "fault"][-1]["detail"] == {"pin": lane.motor}
    assert not [pin for pin in hal.out if hal.out[pin]]      # everything off
    assert hal.tripped == -1               # taken by the controller
