"""Builds every driver from the config's pin map: the one place that knows
which pin is which device."""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.drivers.panel import Dice
from firmware.drivers.panel import Display
from firmware.drivers.panel import Buzzer, Keys
from firmware.drivers.motion import Lane
from firmware.drivers.motion import Lifter
from firmware.drivers.motion import Plate
from firmware.drivers.rfid import Rfid

_UART_DISPLAY = const(1)
_UART_RFID = const(2)
_GUARD_MS = const(10000)       # past the build's deadline (build_timeout comes first)


class Devices:
    def __init__(self, hal, cfg, tags):
        p = cfg.pins
        t = cfg.timings
        per_lane = 2 * cfg.stacks
        run_max = t["build_max_ms"] + _GUARD_MS    # the HAL's guard on plate and lanes
        self.tags = tags
        self.plate = Plate(hal, p["plate_motor"], p["plate_rotation"], t["plate_duty"],
                           t["plate_rev_ms"], run_max)
        self.lanes = [Lane(hal, n, p["lane_feed"][n], p["lane_count"][n], per_lane, run_max)
                      for n in range(4)]
        self.lifters = [Lifter(hal, n, p["lift_up"][n], p["lift_down"][n], p["lift_top"][n],
                               p["lift_bottom"][n], t["lift_up_ms"], t["lift_down_ms"])
                        for n in range(4)]
        # Receive buffers sized to what arrives between two ticks: a whole
        # RFID reply (187 bytes), a few 6-byte display ACKs.
        self.rfid = Rfid(hal.uart(_UART_RFID, p["rfid_tx"], p["rfid_rx"], 192),
                         cfg.n_tiles, t["rfid_reply_ms"], tags)
        self.display = Display(hal.uart(_UART_DISPLAY, p["display_tx"], p["display_rx"], 48),
                               t["display_ack_ms"])
        self.keys = Keys(hal, p["keys"], t["key_debounce_ms"], t["key_double_ms"],
                         t["key_hold_ms"])
        self.buzzer = Buzzer(hal, p["buzzer"])
        self.dice = Dice(hal.rand, t["dice_roll_ms"])
        # Every driver that can raise a fault, checked once per tick.
        self.fault_sources = [self.plate] + self.lanes + self.lifters + [self.rfid, self.display]
