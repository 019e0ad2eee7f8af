"""The table's one configuration file (config.json): pin map, ruleset,
tile sets, timings. Validated as a whole: the first wrong field is named
with what was expected, and a table with a bad config does not move.
"""

import json

from engine_core.check import is_int
from engine_core.rulesets import RulesetError, load as load_ruleset

FORMAT = 1
# ESP32-S3 GPIOs a module without PSRAM exposes (19/20 are USB).
GPIOS = tuple(range(0, 19)) + (21,) + tuple(range(33, 49))
SINGLE_PINS = ("plate_motor", "plate_rotation", "buzzer",
               "display_tx", "display_rx", "rfid_tx", "rfid_rx")
QUAD_PINS = ("lane_feed", "lane_count", "lift_up", "lift_down",
             "lift_top", "lift_bottom", "keys")
# name -> (low, high): every timing is a whole number of ms (or a duty).
TIMINGS = {
    "tick_ms": (1, 100),
    "plate_duty": (1, 1023),
    "plate_rev_ms": (100, 10000),
    "lane_idle_ms": (500, 60000),
    "build_max_ms": (10000, 600000),
    "lift_up_ms": (500, 20000),
    "lift_down_ms": (500, 20000),
    "dice_roll_ms": (0, 10000),
    "key_debounce_ms": (5, 500),
    "rfid_reply_ms": (50, 5000),
    "display_ack_ms": (20, 5000),
}


class ConfigError(ValueError):
    pass


class Config:
    """Checked configuration; attributes mirror the JSON."""

    def __init__(self, data):
        self.source = data                     # as read, for `config_get`
        self.ruleset = load_ruleset(data.get("ruleset"))
        self.tile_sets = data["tile_sets"]
        self.pins = data["pins"]
        for key in TIMINGS:
            setattr(self, key, data["timings"][key])


def _need(cond, field, text):
    if not cond:
        raise ConfigError("config: %s %s" % (field, text))


def check(data):
    """A Config from parsed JSON, or ConfigError naming the first bad field."""
    _need(isinstance(data, dict), "(top level)", "must be an object")
    _need(data.get("format") == FORMAT, "format", "must be %d" % FORMAT)
    try:
        load_ruleset(data.get("ruleset"))
    except RulesetError as e:
        raise ConfigError("config: %s" % e)
    _need(data.get("tile_sets") in (1, 2) and is_int(data.get("tile_sets"), 1, 2),
          "tile_sets", "must be 1 or 2")
    pins = data.get("pins")
    _need(isinstance(pins, dict), "pins", "must be an object")
    used = {}
    for name in SINGLE_PINS + QUAD_PINS:
        _need(name in pins, "pins." + name, "is missing")
        value = pins[name]
        if name in QUAD_PINS:
            _need(isinstance(value, list) and len(value) == 4, "pins." + name,
                  "must be a list of 4 GPIO numbers (sides/seats 0..3)")
            fields = ["pins.%s[%d]" % (name, i) for i in range(4)]
        else:
            value = [value]
            fields = ["pins." + name]
        for field, gpio in zip(fields, value):
            _need(is_int(gpio, 0, 48) and gpio in GPIOS, field,
                  "must be a usable ESP32-S3 GPIO, not %r" % (gpio,))
            _need(gpio not in used, field, "GPIO %d is also %s" % (gpio, used.get(gpio)))
            used[gpio] = field
    for name in pins:
        _need(name in SINGLE_PINS or name in QUAD_PINS, "pins." + name, "is not a known pin")
    timings = data.get("timings")
    _need(isinstance(timings, dict), "timings", "must be an object")
    for name in TIMINGS:
        low, high = TIMINGS[name]
        _need(is_int(timings.get(name), low, high), "timings." + name,
              "must be a whole number %d..%d, not %r" % (low, high, timings.get(name)))
    for name in timings:
        _need(name in TIMINGS, "timings." + name, "is not a known timing")
    return Config(data)


def load(path):
    """Read and check a config file; ConfigError says what is wrong."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ConfigError("config: cannot read %s (%s)" % (path, e))
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ConfigError("config: %s is not valid JSON (%s)" % (path, e))
    return check(data)
