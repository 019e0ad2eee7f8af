"""The table's view of firmware/config.json: pins, ruleset, tile sets, dice time.

One source of truth: the virtual table reads the same file the firmware
reads, so a pin moved in the config moves on both sides at once. Only what
is physical is taken from it (pins, how many tile sets the machine holds,
the ruleset's tiles, the dice display time for the lower bound, how the
players work the seat keys and how long the table waits before a draw); the
firmware's deadlines (`plate_rev_ms`, `lift_up_ms`, ...) are its own
business and the model never reads them.
"""

import json
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "firmware" / "config.json"

# Pin names of docs/hardware.md by direction (UART pins are not bus pins).
INPUTS = ("plate_rotation", "lane_count", "lift_top", "lift_bottom", "keys")
OUTPUTS = ("plate_motor", "lane_feed", "lift_up", "lift_down", "buzzer")


def label(name, index):
    """A pin's name for logs and fault strings: "plate_rotation", "lane_count:2"."""
    return name if index is None else "%s:%d" % (name, index)


class TableConfig:
    def __init__(self, path=None):
        self.path = Path(path) if path is not None else DEFAULT_PATH
        with open(self.path) as f:
            raw = json.load(f)
        self.ruleset = raw.get("ruleset")
        self.tile_sets = int(raw.get("tile_sets", 1))
        self.dice_roll_ms = int(raw["timings"]["dice_roll_ms"])
        # How the seat keys are worked (the players read the manual too).
        self.key_double_ms = int(raw["timings"]["key_double_ms"])
        self.key_hold_ms = int(raw["timings"]["key_hold_ms"])
        self.draw_grace_ms = int(raw["timings"]["draw_grace_ms"])
        self.gpio = {}          # (name, index or None) -> gpio
        self.names = {}         # gpio -> (name, index or None)
        for name in INPUTS + OUTPUTS:
            value = raw["pins"][name]
            if isinstance(value, list):
                for i, g in enumerate(value):
                    self._add(name, i, g)
            else:
                self._add(name, None, value)
        self.inputs = [g for g, (n, _) in self.names.items() if n in INPUTS]

    def _add(self, name, index, gpio):
        if gpio in self.names:
            raise ValueError("%s: GPIO %d is both %s and %s" % (
                self.path.name, gpio, label(*self.names[gpio]), label(name, index)))
        self.gpio[name, index] = gpio
        self.names[gpio] = (name, index)

    def pin(self, name, index=None):
        return self.gpio[name, index]

    def label(self, gpio):
        return label(*self.names[gpio]) if gpio in self.names else "gpio%d" % gpio
